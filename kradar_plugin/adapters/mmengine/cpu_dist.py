"""Distributed runs of mmengine on machines without CUDA (the mirror of ``adapters/mmcv1/cpu_dist.py``):
mmengine's ``init_dist`` calls ``torch.cuda.set_device`` and ``Runner.wrap_model`` passes ``device_ids``, both
fatal on CPU; the runner initialises the process group with gloo (``distributed.cpu_group``) and wraps the
model without device ids (here). ``env_cfg.dist_cfg.timeout`` may be seconds or a ``datetime.timedelta``.
"""
import datetime

from kradar_plugin.distributed import dist_params


def dist_cfg_for_mmengine(dist_cfg):
    """Copy of ``dist_cfg`` with ``timeout`` in seconds, as mmengine's ``init_dist`` wants it (a timedelta
    is converted; anything but a positive number or timedelta raises ValueError naming the field)."""
    params = dist_params.normalize_dist_params(dist_cfg)
    if isinstance(params.get('timeout'), datetime.timedelta):
        params['timeout'] = params['timeout'].total_seconds()
    return params


def cuda_available():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def wrap_model_cpu(runner, model_wrapper_cfg, model):
    """``Runner.wrap_model`` for a distributed run on CPU: the same wrapper, without ``device_ids``."""
    from mmengine.model import MMDistributedDataParallel, convert_sync_batchnorm, is_model_wrapper
    from mmengine.registry import MODEL_WRAPPERS
    if is_model_wrapper(model):
        return model
    model = model.to('cpu')
    sync_bn = runner.cfg.get('sync_bn', None)
    if sync_bn is not None:
        model = convert_sync_batchnorm(model, sync_bn)
    if model_wrapper_cfg is None:
        return MMDistributedDataParallel(module=model, broadcast_buffers=False,
                                         find_unused_parameters=runner.cfg.get('find_unused_parameters', False))
    model_wrapper_cfg = dict(model_wrapper_cfg)
    model_wrapper_cfg.setdefault('type', 'MMDistributedDataParallel')
    return MODEL_WRAPPERS.build(model_wrapper_cfg, default_args=dict(module=model))
