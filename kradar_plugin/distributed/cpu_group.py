"""The one process-group init of kradar_plugin's launches on machines without CUDA: gloo.

Used by the mmcv 1.x pytorch and Slurm launchers (``adapters/mmcv1/dist_init.py``) and by mmengine's runner
(``adapters/mmengine/runner_builder.py``): the frameworks' own inits call ``torch.cuda.set_device`` and
default to nccl, both fatal without CUDA. Rank, world size and master address come from the launcher's
environment (torch's ``env://``: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); the config's ``timeout`` may be
seconds or a ``datetime.timedelta`` (``dist_params.normalize_dist_params`` checks it).
"""
from . import group_teardown
from .dist_params import normalize_dist_params


def init_cpu_process_group(dist_params=None):
    """``torch.distributed.init_process_group`` with gloo, the rest of ``dist_params`` (timeout, init_method)
    passed on: the ``backend`` it names (nccl needs CUDA) is replaced, mmengine's ``init_backend`` is not
    torch's. The group is destroyed at exit (``group_teardown``). Returns the backend used."""
    import torch.distributed as dist
    params = normalize_dist_params(dist_params)
    params.pop('backend', None)
    params.pop('init_backend', None)
    dist.init_process_group(backend='gloo', **params)
    group_teardown.destroy_at_exit()
    return 'gloo'
