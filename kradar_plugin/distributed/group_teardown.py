"""Destroy the process group that our CPU launch initialised, before the interpreter shuts down.

A gloo group alive at interpreter exit can abort a rank whose work all succeeded ("terminate called without an
active exception", exit code -6): a gloo worker that releases a finished collective's tensors needs the GIL, and
during finalization it is ended inside C++ code. Where kradar_plugin creates the group (the CPU/gloo launches of
both adapters), an ``atexit`` handler destroys it while the interpreter is whole. Forgetting the group is not
enough when a ``DistributedDataParallel`` wrapper outlives the run (on mmdet3d 1.4, trimesh keeps the traceback
of an import that failed while the runner was built, frames and runner included): the handler also drops the
wrapper's ``reducer``, ``logger`` and ``process_group``, so the group's threads are joined there; the wrapped
module stays usable. Only from ``facts.TORCH_EXIT_RELEASES_WRAPPERS`` on: on torch 1.10 ending the group's store
at exit can hang both ranks, so there the wrapper keeps the group as before. Fail-fast leaves with ``os._exit``
and skips all this: a lost peer could make it wait.
"""
import atexit
import gc
import sys

from ..facts import TORCH_EXIT_RELEASES_WRAPPERS
from ..facts.versions import parse_version

_REGISTERED = []
_WRAPPER_HOLDS = ('reducer', 'logger', 'process_group')


def releases_wrappers():
    """Whether the teardown drops the wrappers' holds on this torch (module docstring)."""
    import torch
    version = parse_version(torch.__version__)
    return version is not None and version >= TORCH_EXIT_RELEASES_WRAPPERS


def destroy_at_exit():
    """Register (once) the ``atexit`` teardown of the default process group."""
    if not _REGISTERED:
        atexit.register(destroy_process_group)
        _REGISTERED.append(True)


def destroy_process_group():
    """``torch.distributed.destroy_process_group()`` when a group is initialised, then the wrappers' holds on
    it dropped (module docstring); an error is one line on stderr (the run's work is done: exiting must not
    fail because of the teardown)."""
    try:
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            return
        group = dist.distributed_c10d._get_default_group()
        dist.destroy_process_group()
        if sys.getrefcount(group) > 2 and releases_wrappers():   # held by more than ``group`` and the argument
            release_wrappers(group)
    except Exception as exc:  # noqa: BLE001 - reported, never raised at exit
        sys.stderr.write('kradar_plugin: destroying the process group at exit failed ({}: {})\n'.format(
            type(exc).__name__, exc))


def release_wrappers(group):
    """Drop ``reducer``, ``logger`` and ``process_group`` from every ``DistributedDataParallel`` that holds
    ``group``."""
    from torch.nn.parallel import DistributedDataParallel
    wrappers = [owner for held_in in gc.get_referrers(group) if isinstance(held_in, dict)
                for owner in gc.get_referrers(held_in)
                if isinstance(owner, DistributedDataParallel) and getattr(owner, '__dict__', None) is held_in]
    for wrapper in wrappers:
        for name in _WRAPPER_HOLDS:
            wrapper.__dict__.pop(name, None)
