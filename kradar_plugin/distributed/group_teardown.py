"""Destroy the process group that our CPU launch initialised, before the interpreter shuts down.

A gloo process group still alive at interpreter exit can abort a rank whose work all succeeded ("terminate
called without an active exception", exit code -6): gloo's C++ threads are torn down after the interpreter, and
the launcher then reports a failed rank for a completed run. Seen on mmengine's eval-only launch with torch 2.x
(gloo, two processes). Where kradar_plugin creates the group (the CPU/gloo launches of both adapters), it
destroys it from an ``atexit`` handler, which runs while the interpreter is still whole. Fail-fast leaves with
``os._exit`` and skips it, as it must: a lost peer could make the teardown wait.
"""
import atexit
import sys

_REGISTERED = []


def destroy_at_exit():
    """Register (once) the ``atexit`` teardown of the default process group."""
    if not _REGISTERED:
        atexit.register(destroy_process_group)
        _REGISTERED.append(True)


def destroy_process_group():
    """``torch.distributed.destroy_process_group()`` when a group is initialised; an error is one line on
    stderr (the run's work is done: exiting must not fail because of the teardown)."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    except Exception as exc:  # noqa: BLE001 - reported, never raised at exit
        sys.stderr.write('kradar_plugin: destroying the process group at exit failed ({}: {})\n'.format(
            type(exc).__name__, exc))
