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


def probe_launch(environ=None):
    """'slurm' inside a Slurm job, 'multi-node' for a launch over several nodes (torchrun's NNODES / GROUP
    ranks, our dist_train.sh's NNODES), else None: the launches whose host network the doctor judges."""
    environ = os.environ if environ is None else environ
    if environ.get('SLURM_JOB_ID') or environ.get('SLURM_PROCID'):
        return 'slurm'
    for key in ('NNODES', 'GROUP_WORLD_SIZE', 'SLURM_NNODES'):
        try:
            if int(environ.get(key, '1')) > 1:
                return 'multi-node'
        except ValueError:
            continue
    return None


def probe_host_network():
    """{'name', 'addresses', 'loopback', 'interfaces'}: this host's name, what it resolves to, whether that is
    loopback only, and the (name, IPv4) of the interfaces that are not (distributed.host_network)."""
    from ...distributed.host_network import hostname_facts, interfaces, is_loopback
    name, addresses, loopback = hostname_facts()
    return {'name': name, 'addresses': addresses, 'loopback': loopback,
            'interfaces': [(n, a) for n, a in interfaces() if not is_loopback(a)]}


def probe_scontrol():
    """The path of Slurm's scontrol (mmcv's Slurm init asks it for the master node), None without one."""
    import shutil
    return shutil.which('scontrol')
