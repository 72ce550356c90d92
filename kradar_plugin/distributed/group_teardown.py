"""Destroy the process group that our CPU launch initialised, before the interpreter shuts down.

A gloo group alive at interpreter exit can abort a rank whose work all succeeded ("terminate called without an
active exception", exit code -6): a gloo worker that releases a finished collective's tensors needs the GIL, and
during finalization it is ended inside C++ code. Where kradar_plugin creates the group (the CPU/gloo launches of
both adapters), an ``atexit`` handler destroys it while the interpreter is whole. Forgetting the group is not
enough while Python objects still hold it; its threads end only with the last reference. The handler drops:
- what a ``DistributedDataParallel`` wrapper that outlives the run holds (``reducer``, ``logger``,
  ``process_group``; on mmdet3d 1.4 trimesh keeps the traceback of a failed import, runner frames included);
  the wrapped module stays usable;
- function defaults bound to the group: from about torch 2.4 on, DDP's first forward imports torch._dynamo,
  which imports ``torch.distributed.nn.functional``, whose collectives say ``group=group.WORLD``, evaluated at
  import, after the init: 10 defaults hold the group (torch 2.13). Containers that hold only the group are not
  tracked by the collector, so ``gc.get_referrers`` does not show them. They get None, the default of an import
  before the init (the default group at call time).
Only from ``facts.TORCH_EXIT_RELEASES_WRAPPERS`` on: on torch 1.10 ending the group's store at exit can hang
both ranks, so there the holders keep the group as before. Fail-fast leaves with ``os._exit`` and skips all this.
"""
import atexit
import gc
import sys
import types

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
    """``torch.distributed.destroy_process_group()`` when a group is initialised, then what still holds it
    dropped (module docstring); an error is one line on stderr (the run's work is done: exiting must not
    fail because of the teardown)."""
    try:
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_initialized()):
            return
        group = dist.distributed_c10d._get_default_group()
        dist.destroy_process_group()
        if sys.getrefcount(group) > 2 and releases_wrappers():   # held by more than ``group`` and the argument
            release_wrappers(group)
            release_function_defaults(group)
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


def release_function_defaults(group):
    """Replace ``group`` by None in the defaults of every Python function (module docstring); returns how
    many functions held it."""
    if sys.getrefcount(group) <= 3:                 # ``group``, the argument and the caller's: nothing else
        return 0
    held = 0
    for function in gc.get_objects():
        if type(function) is not types.FunctionType:
            continue
        defaults = function.__defaults__
        if defaults and any(value is group for value in defaults):
            function.__defaults__ = tuple(None if value is group else value for value in defaults)
            held += 1
        keywords = function.__kwdefaults__
        if keywords and any(value is group for value in keywords.values()):
            function.__kwdefaults__ = dict((k, None if v is group else v) for k, v in keywords.items())
            held += 1
    return held
