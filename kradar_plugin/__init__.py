"""kradar_plugin: K-Radar tooling for mmcv/mmdet/mmdet3d projects.

One ``custom_imports = dict(imports=['kradar_plugin'])`` line gives a config the checked rotated IoU (also
under mmdet3d's own module paths), the K-Radar dataset and evaluator, and the eval-only runner switch.
Importing needs numpy alone; mmcv/mmdet components are registered only when those frameworks import.
"""
from .ops import rotate_iou_eval, rotate_iou_gpu_eval  # noqa: F401  (numpy-only core)
from .version import __version__  # noqa: F401
from ._registration import register_framework_components
from .distributed.failfast import install_error_file_hook

install_error_file_hook()  # torchelastic workers: uncaught tracebacks reach the launcher's summary

register_framework_components()
