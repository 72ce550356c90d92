"""Serve the checked rotated IoU under mmdet3d's own module paths.

mmdet3d's ``kitti_utils/rotate_iou.py`` declares its CUDA kernel with an explicit signature, so numba
compiles it the moment the module is imported, and that import fails (NvvmError, CudaSupportError, ...)
on many machines, typically at the first evaluation after a whole epoch. Placing our module in
``sys.modules`` under those names before anything imports them makes every
``from mmdet3d...kitti_utils.rotate_iou import rotate_iou_gpu_eval`` (including mmdet3d's own lazy
imports in ``kitti_utils/eval.py``) get the checked function, and the crashing file is never executed.
Installed only when mmdet3d is installed; nothing here imports mmdet3d (0.17 asserts an mmcv range).
"""
import sys
import types

from ..ops import rotate_iou

ALIASES = (
    'mmdet3d.core.evaluation.kitti_utils.rotate_iou',        # mmdet3d 0.17 .. 1.0.0rc6
    'mmdet3d.evaluation.functional.kitti_utils.rotate_iou',  # mmdet3d 1.x
)


def _module(name):
    mod = types.ModuleType(name, 'kradar_plugin stand-in for ' + name + ': ' + (rotate_iou.__doc__ or ''))
    mod.__file__ = rotate_iou.__file__
    mod.__kradar_plugin__ = True
    mod.rotate_iou_gpu_eval = rotate_iou.rotate_iou_gpu_eval
    mod.rotate_iou_eval = rotate_iou.rotate_iou_eval

    def __getattr__(attr):
        raise AttributeError('%s is served by kradar_plugin, which provides rotate_iou_gpu_eval and '
                             'rotate_iou_eval only (not %r)' % (name, attr))
    mod.__getattr__ = __getattr__
    return mod


def install():
    """Put the stand-ins in ``sys.modules`` (replacing a copy imported earlier) and on their parent
    packages where those are already imported. Returns the names installed."""
    for name in ALIASES:
        mod = sys.modules.get(name)
        if mod is None or not getattr(mod, '__kradar_plugin__', False):
            mod = _module(name)
            sys.modules[name] = mod
        parent, _, leaf = name.rpartition('.')
        if parent in sys.modules:
            setattr(sys.modules[parent], leaf, mod)
    return ALIASES


install()
