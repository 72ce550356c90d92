"""kradar_plugin: K-Radar tooling for mmcv/mmdet/mmdet3d projects.

One ``custom_imports = dict(imports=['kradar_plugin'])`` line gives a config the checked rotated IoU (also
under mmdet3d's own module paths), the K-Radar dataset and evaluator, and the eval-only runner switch.
Importing needs numpy alone; mmcv/mmdet components are registered only when those frameworks import.
"""
from .ops import rotate_iou_eval, rotate_iou_gpu_eval  # numpy-only core
from .version import __version__
from ._registration import register_framework_components
from .distributed.failfast import install_error_file_hook

__all__ = ['rotate_iou_eval', 'rotate_iou_gpu_eval', '__version__']

install_error_file_hook()  # torchelastic workers: uncaught tracebacks reach the launcher's summary

register_framework_components()
