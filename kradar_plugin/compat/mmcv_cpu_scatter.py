"""mmcv-full 1.4.0 (EchoFusion's pin) on the CPU: the scatter of ``MMDataParallel`` and
``MMDistributedDataParallel`` adds a leading dimension of size 1 to every tensor inside a ``DataContainer``.

mmcv 1.4.0's ``parallel._functions.scatter`` ``unsqueeze(0)``s each tensor for device -1 (the CPU), which
is right only for a bare tensor (``Scatter.forward`` then splits the result along that dimension). Tensors
inside ``DataContainer``s (stacked batches, per-sample point clouds and boxes) reach the model as
``(1, B, ...)`` / ``(1, N, C)``: every CPU evaluation or training step of mmdet/mmdet3d models breaks
(EchoFusion's pin; later mmcv releases return the tensors as they are). GPU runs never scatter to
device -1 and are untouched.

:func:`install` probes the installed mmcv once and, only when it has the bug, makes ``Scatter.forward``
for the CPU return what the fixed releases return: the input's tensors unchanged (contiguous), one share
per target.
"""
import warnings

from kradar_plugin.compat import CompatRepairWarning


def _contiguous(obj):
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.contiguous()
    if isinstance(obj, list):
        return [_contiguous(item) for item in obj]
    raise TypeError('Unknown type {}.'.format(type(obj)))


def has_bug(scatter_cls):
    """True when ``scatter_cls.forward([-1], [tensor])`` adds a dimension (mmcv 1.4.0)."""
    import torch
    probe = torch.zeros(2, 3)
    out = scatter_cls.forward([-1], [probe])
    return tuple(out[0].shape) != (2, 3)


def install():
    """Fix ``mmcv.parallel._functions.Scatter.forward`` for the CPU when the installed mmcv needs it;
    True if installed."""
    try:
        from mmcv.parallel import _functions
    except ImportError:  # mmcv 2.x: no mmcv.parallel
        return False
    scatter_cls = getattr(_functions, 'Scatter', None)
    if scatter_cls is None or getattr(scatter_cls.forward, '_kradar_patched', False) or not has_bug(scatter_cls):
        return False
    original = scatter_cls.forward

    def forward(target_gpus, input):
        if list(target_gpus) != [-1]:
            return original(target_gpus, input)
        import torch
        if isinstance(input, torch.Tensor):
            return (input.contiguous(),)
        return tuple(_contiguous(item) for item in input)

    forward._kradar_patched = True
    forward.__wrapped__ = original
    scatter_cls.forward = staticmethod(forward)
    try:
        import mmcv
        version = mmcv.__version__
    except Exception:  # noqa: BLE001
        version = '?'
    warnings.warn('kradar_plugin: mmcv {} adds a leading dimension to DataContainer tensors scattered to the '
                  'CPU; kradar_plugin passes them unchanged, as later mmcv releases do'.format(version), CompatRepairWarning)
    return True
