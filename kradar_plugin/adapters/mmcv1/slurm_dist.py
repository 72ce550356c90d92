"""``init_dist('slurm', **dist_params)`` (``tools/train.py --launcher slurm`` under ``srun``) for every case
mmcv-full 1.x's ``_init_dist_slurm`` misses.

mmcv's function (1.4 ... 1.7) takes only ``(backend, port=None)``: it derives the rank, the world size and
the master address from ``SLURM_PROCID``, ``SLURM_NTASKS`` and the first host of ``scontrol show hostname
$SLURM_NODELIST``, calls ``torch.cuda.set_device(SLURM_PROCID % device_count)`` and
``init_process_group(backend)``. So

- ``dist_params = dict(backend=..., timeout=...)`` is a TypeError (no ``timeout`` argument), and the
  process group gets the default 30-minute timeout: the fail-fast setting a K-Radar config carries for the
  pytorch launcher is lost on Slurm;
- a machine without CUDA divides by zero.

:func:`init_dist_slurm` does what mmcv's does, from the same variables, plus: the ``timeout`` (seconds or a
timedelta), ``LOCAL_RANK`` from ``SLURM_LOCALID`` (the task's index on its node; mmcv uses the global rank
modulo the GPUs), gloo without CUDA. A GPU call without any extra argument keeps mmcv's own function.
"""
import os
import subprocess
import warnings


def _master_addr(node_list):
    """The first host of the job's node list, as mmcv asks Slurm for it."""
    out = subprocess.run('scontrol show hostname {} | head -n1'.format(node_list), shell=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    addr = out.stdout.strip()
    if not addr:
        raise RuntimeError('scontrol show hostname {!r} gave no host ({}): run under srun/sbatch, where '
                           'scontrol is on PATH'.format(node_list, out.stderr.strip() or 'no output'))
    return addr


def slurm_environment(environ=None, port=None):
    """The torch.distributed variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) of this
    Slurm task, set in ``environ`` (default ``os.environ``) and returned."""
    environ = os.environ if environ is None else environ
    proc_id = int(environ['SLURM_PROCID'])
    ntasks = int(environ['SLURM_NTASKS'])
    if port is not None:
        environ['MASTER_PORT'] = str(port)
    elif 'MASTER_PORT' not in environ:
        # every task must use the same port: a fixed one, as torch.distributed's default (mmcv's own
        # function picks a free port per task when 29500 is busy, which other tasks cannot know)
        environ['MASTER_PORT'] = '29500'
    if 'MASTER_ADDR' not in environ:
        environ['MASTER_ADDR'] = _master_addr(environ['SLURM_NODELIST'])
    environ['WORLD_SIZE'] = str(ntasks)
    environ['RANK'] = str(proc_id)
    environ['LOCAL_RANK'] = str(environ.get('SLURM_LOCALID', proc_id))
    return dict((k, environ[k]) for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'))


def init_dist_slurm(backend='nccl', port=None, **kwargs):
    """mmcv's ``_init_dist_slurm`` with ``timeout`` and without CUDA (see the module docstring)."""
    import torch
    import torch.distributed as dist
    from kradar_plugin.distributed.dist_params import normalize_dist_params
    slurm_environment(port=port)
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ['LOCAL_RANK']) % torch.cuda.device_count())
    else:
        if backend != 'gloo':
            warnings.warn('kradar_plugin: no CUDA device, using the gloo backend instead of {!r} for this '
                          'CPU run'.format(backend))
        backend = 'gloo'
    dist.init_process_group(backend=backend, **normalize_dist_params(kwargs))
    if not torch.cuda.is_available():
        from kradar_plugin.distributed import group_teardown
        from .cpu_dist import install_distributed_cpu_patches
        group_teardown.destroy_at_exit()
        install_distributed_cpu_patches()


def wrap(original):
    """The replacement of mmcv's ``_init_dist_slurm``: mmcv's own on a GPU without extra arguments."""
    import functools

    @functools.wraps(original)
    def init_slurm(backend, port=None, **kwargs):
        import torch
        if torch.cuda.is_available() and not kwargs:
            return original(backend, port)
        return init_dist_slurm(backend, port, **kwargs)
    init_slurm._kradar_slurm = True
    return init_slurm
