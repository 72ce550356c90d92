"""Process-group init of mmcv-full 1.x launches (``init_dist(launcher, backend, **dist_params)``): the timeout
every launcher takes, the pytorch launcher without CUDA, and what mmcv's Slurm init misses.

- ``_init_dist_pytorch`` / ``_init_dist_mpi`` pass ``dist_params`` on to ``init_process_group``, where a
  numeric ``timeout`` (seconds, as configs say) fails: :func:`install_timeout_support` converts it.
- ``_init_dist_pytorch`` calls ``torch.cuda.set_device(rank % torch.cuda.device_count())`` (ZeroDivisionError
  with no GPU): on a machine without CUDA :func:`install_cpu_support` replaces it by
  :func:`init_dist_pytorch_cpu` (gloo, ``distributed.cpu_group``).
- ``_init_dist_slurm`` (1.4 ... 1.7) takes only ``(backend, port=None)``: it derives the rank, the world size
  and the master address from ``SLURM_PROCID``, ``SLURM_NTASKS`` and the first host of ``scontrol show
  hostname $SLURM_NODELIST``, calls ``torch.cuda.set_device(SLURM_PROCID % device_count)`` and
  ``init_process_group(backend)``. So ``dist_params = dict(backend=..., timeout=...)`` is a TypeError (no
  ``timeout`` argument) and the group gets the default 30-minute timeout: the fail-fast setting a K-Radar
  config carries for the pytorch launcher is lost on Slurm; and a machine without CUDA divides by zero.
  :func:`init_dist_slurm` does what mmcv's does, from the same variables, plus: the ``timeout`` (seconds or
  a timedelta), ``LOCAL_RANK`` from ``SLURM_LOCALID`` (the task's index on its node; mmcv uses the global
  rank modulo the GPUs), gloo without CUDA, and a ``MASTER_PORT`` derived from the job id when none is set
  (:func:`job_port`: two jobs on the same nodes then differ). A GPU call without any extra argument keeps
  mmcv's own function (with that port).

Every init runs under ``failfast.guarded_init``: a rank that cannot connect at init (a host name resolving to
loopback, an unreachable MASTER_ADDR) names the cause and the fix, and the other ranks leave at once.

After a CPU init the replacements a distributed CPU run needs next are installed (``cpu_dist``): this module
imports ``cpu_dist``, never the reverse.
"""
import functools
import os
import subprocess
import warnings

from kradar_plugin.distributed.cpu_group import init_cpu_process_group
from kradar_plugin.distributed.dist_params import normalize_dist_params
from kradar_plugin.distributed.failfast import guarded_init

from .cpu_dist import install_distributed_cpu_patches, install_mmdet3d_cpu_support
from .patching import loaded_modules, replace

_INSTALLED = {'cpu': False, 'timeout': False}


def install_timeout_support():
    """Let ``dist_params=dict(timeout=<seconds>)`` reach init_process_group as a timedelta, on every launcher."""
    if _INSTALLED['timeout']:
        return
    mods = loaded_modules(['mmcv.runner.dist_utils'])

    def wrap(original):
        @functools.wraps(original)
        def init_with_timeout(*args, **kwargs):
            return guarded_init(original, *args, **normalize_dist_params(kwargs))
        return init_with_timeout

    replace(mods, '_init_dist_pytorch', wrap)
    replace(mods, '_init_dist_mpi', wrap)
    replace(mods, '_init_dist_slurm', _wrap_slurm)  # mmcv's takes no timeout and needs CUDA
    _INSTALLED['timeout'] = True


def install_cpu_support(force=False):
    """On a machine without CUDA (or with ``force``), replace mmcv's ``_init_dist_pytorch`` by the CPU one,
    and let mmdet3d's train functions run (``cpu_dist.install_mmdet3d_cpu_support``); GPU runs keep the
    standard code path. Cheap at import time: the DDP and result-collection replacements (which import
    mmdet.apis) are installed when a distributed CPU run actually initialises. Returns True if installed."""
    import torch
    if _INSTALLED['cpu']:
        install_mmdet3d_cpu_support()  # mmdet3d's apis may have been imported since
        return True
    if torch.cuda.is_available() and not force:
        return False
    install_timeout_support()
    for mod in loaded_modules(['mmcv.runner.dist_utils']):
        if not getattr(mod._init_dist_pytorch, '_kradar_cpu', False):
            init_dist_pytorch_cpu._kradar_cpu = True
            mod._init_dist_pytorch = init_dist_pytorch_cpu
    install_mmdet3d_cpu_support()
    _INSTALLED['cpu'] = True
    return True


def init_dist_pytorch_cpu(backend='gloo', **kwargs):
    """CPU replacement for mmcv's ``_init_dist_pytorch``: no ``torch.cuda.set_device``; gloo backend.
    Also installs the mmdet/mmcv replacements a distributed CPU run needs next (DDP, result collection)."""
    if backend != 'gloo':
        warnings.warn('kradar_plugin: no CUDA device, using the gloo backend instead of {!r} for this '
                      'CPU run'.format(backend))
    guarded_init(init_cpu_process_group, kwargs)
    install_distributed_cpu_patches()


def _master_addr(node_list):
    """The first host of the job's node list, as mmcv asks Slurm for it."""
    out = subprocess.run('scontrol show hostname {} | head -n1'.format(node_list), shell=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    addr = out.stdout.strip()
    if not addr:
        raise RuntimeError('scontrol show hostname {!r} gave no host ({}): run under srun/sbatch, where '
                           'scontrol is on PATH'.format(node_list, out.stderr.strip() or 'no output'))
    return addr


# the ports derived from a job id: JOB_PORT_BASE + id % JOB_PORT_SPAN, below Linux's ephemeral ports (32768 up),
# where a connection's own port could already hold the derived one (EADDRINUSE)
JOB_PORT_BASE = 20000
JOB_PORT_SPAN = 10000


def job_port(environ):
    """The rendezvous port every task of a Slurm job agrees on without being told: derived from
    ``SLURM_JOB_ID``, so that two jobs on the same nodes differ (mmcv's own function picks a free port per
    task when 29500 is busy, which the other tasks cannot know: mmcv#2309); 29500 outside a job."""
    job = environ.get('SLURM_JOB_ID', '')
    return JOB_PORT_BASE + int(job) % JOB_PORT_SPAN if job.isdigit() else 29500


def slurm_environment(environ=None, port=None):
    """The torch.distributed variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) of this
    Slurm task, set in ``environ`` (default ``os.environ``) and returned."""
    environ = os.environ if environ is None else environ
    proc_id = int(environ['SLURM_PROCID'])
    ntasks = int(environ['SLURM_NTASKS'])
    if port is not None:
        environ['MASTER_PORT'] = str(port)
    elif 'MASTER_PORT' not in environ:
        environ['MASTER_PORT'] = str(job_port(environ))
    if 'MASTER_ADDR' not in environ:
        environ['MASTER_ADDR'] = _master_addr(environ['SLURM_NODELIST'])
    environ['WORLD_SIZE'] = str(ntasks)
    environ['RANK'] = str(proc_id)
    environ['LOCAL_RANK'] = str(environ.get('SLURM_LOCALID', proc_id))
    return dict((k, environ[k]) for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'))


def init_dist_slurm(backend='nccl', port=None, **kwargs):
    """mmcv's ``_init_dist_slurm`` with ``timeout`` and without CUDA (see the module docstring)."""
    import torch
    slurm_environment(port=port)
    if not torch.cuda.is_available():
        init_dist_pytorch_cpu(backend, **kwargs)
        return
    import torch.distributed as dist
    torch.cuda.set_device(int(os.environ['LOCAL_RANK']) % torch.cuda.device_count())
    guarded_init(dist.init_process_group, backend=backend, **normalize_dist_params(kwargs))


def _wrap_slurm(original):
    """The replacement of mmcv's ``_init_dist_slurm``: mmcv's own on a GPU without extra arguments."""
    @functools.wraps(original)
    def init_slurm(backend, port=None, **kwargs):
        import torch
        if torch.cuda.is_available() and not kwargs:
            if port is None and 'MASTER_PORT' not in os.environ:
                os.environ['MASTER_PORT'] = str(job_port(os.environ))
            return original(backend, port)
        return init_dist_slurm(backend, port, **kwargs)
    init_slurm._kradar_slurm = True
    return init_slurm
