"""The host's resources for DataLoader workers: /dev/shm, the fd limit, torch_shm_manager daemons."""
import glob
import os

from ..pitfalls.shm import shm_space
from ..rules.nccl import ASYNC, BLOCKING
from .files import read_text


def probe_shm(path='/dev/shm'):
    """Total bytes of the shared-memory filesystem DataLoader workers use (None when it is missing)."""
    return shm_space(path)[0]


def probe_nofile():
    """Soft RLIMIT_NOFILE (file descriptors), None where unsupported."""
    try:
        import resource
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):
        return None


SHM_MANAGER_COMM = 'torch_shm_manager'[:15]  # the kernel keeps 15 characters of a command name


def probe_shm_managers(proc='/proc'):
    """Number of running torch_shm_manager processes (leaked by the file_system sharing strategy)."""
    return sum(1 for comm in glob.glob(os.path.join(proc, '[0-9]*', 'comm'))
               if (read_text(comm) or '').strip() == SHM_MANAGER_COMM)


def probe_nccl_env(environ=None):
    """{name: value} of the NCCL error-handling variables set in this environment."""
    environ = os.environ if environ is None else environ
    return dict((k, environ[k]) for k in ASYNC + BLOCKING if k in environ)
