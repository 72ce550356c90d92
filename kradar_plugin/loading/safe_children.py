"""The child processes of :mod:`safe_load`: one forked child per file, with an address-space and a time limit.

A child reads its file and runs the caller's ``convert`` on the content; only the converted result comes back
through a pipe while the parent runs its ``meanwhile`` (the evaluator's warm-up). The parent names what
happened to a child that sends no result: the time limit (``SIGALRM``/``SIGXCPU``), a kill (``SIGKILL``, e.g.
the kernel out of memory), or a crash (any other signal: a crash, not memory). An untrusted child's standard
error goes to a temporary file, shown by the parent only when the read succeeded: for a bad file the parent's
one error line is all the user sees (no warning or message printed by numpy or CPython on the way).
"""
import os
import resource
import signal
import sys
import time

from .. import settings
from . import safe_load

_GRACE = 2.0       # seconds the parent waits past a child's own time limit before it ends the child
_MAX_STDERR = 64 << 10     # bytes of an untrusted child's standard error shown after a successful read


def fork_context(paths, trusted):
    """multiprocessing's fork context when children should read, else None. Untrusted files: always where
    fork exists; trusted ones as ``KRADAR_EVAL_LOAD_WORKERS`` says (auto: 4 MiB together, 2+ CPUs)."""
    if not safe_load.platform_can_fork():
        return None
    import multiprocessing
    if 'fork' not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
        return None          # a daemonic process may not have children
    if trusted:
        choice = settings.raw(settings.EVAL_LOAD_WORKERS).lower()
        if choice in ('0', 'false', 'no', 'off'):
            return None
        if choice in ('', 'auto'):
            size = sum(os.path.getsize(p) for p in paths)
            if size < safe_load.MIN_PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
                return None
    return multiprocessing.get_context('fork')


def _vm_bytes():
    """This process's address-space size (Linux /proc), 0 where unknown."""
    try:
        with open('/proc/self/status') as f:
            for line in f:
                if line.startswith('VmSize:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def memory_budget(limits, size):
    """Bytes a child may add to its address space: the limit, or 8x the file size when larger."""
    return max(int(limits.memory_mb * (1 << 20)), 8 * size)


def _limit_self(limits, size):
    """In the child: the address-space and time limits (never above a limit already set)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = _vm_bytes() + memory_budget(limits, size)
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft == resource.RLIM_INFINITY or want < soft:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    signal.signal(signal.SIGALRM, signal.SIG_DFL)     # the default action ends the process, even in C code
    signal.setitimer(signal.ITIMER_REAL, float(limits.seconds))


def _capture_stderr():
    """In an untrusted child: its standard error (file descriptor 2: Python's warnings and what C code prints,
    e.g. CPython's own complaint when a huge BYTEARRAY8 cannot be allocated) into a temporary file; returns a
    function giving what was written (at most :data:`_MAX_STDERR` bytes). The parent shows it only when the
    file was read: a bad file gives its one error line and nothing else."""
    import tempfile
    try:
        sys.stderr.flush()
        capture = tempfile.TemporaryFile()
        os.dup2(capture.fileno(), 2)
    except (OSError, ValueError, AttributeError):
        return lambda: ''

    def captured():
        try:
            sys.stderr.flush()
            capture.seek(0)
            return capture.read(_MAX_STDERR).decode('utf-8', 'replace')
        except (OSError, ValueError, AttributeError, MemoryError):
            return ''
    return captured


def _child(conn, job, trusted, limits):
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the parent's to handle; it ends us
    captured = lambda: ''  # noqa: E731
    if not trusted:
        captured = _capture_stderr()
        _limit_self(limits, os.path.getsize(job[1]))
    out = safe_load._attempt(job, trusted, limits, child=True)
    try:
        conn.send(out + (captured() if out[0] == 'ok' else '',))
    except MemoryError:
        safe_load._KEPT[:] = []
        conn.send(('memory', None, ''))
    conn.close()


def _start(context, job, trusted, limits):
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, job, trusted, limits), daemon=True,
                              name='kradar-eval-read{}'.format(job[0]))
    process.start()
    send.close()     # this process keeps only the reading end: a child that dies gives EOFError
    return process, receive


def run(context, jobs, meanwhile, trusted, limits):
    """``convert(content)`` of each job, each read in a child (see the module docstring)."""
    workers = []
    try:
        for job in jobs:
            workers.append(_start(context, job, trusted, limits))
        deadline = time.time() + limits.seconds + _GRACE
        if meanwhile is not None:
            meanwhile()
        return tuple(_result(worker, job, trusted, limits, deadline) for worker, job in zip(workers, jobs))
    finally:
        for process, conn in workers:
            conn.close()
            if process.is_alive():
                process.kill() if hasattr(process, 'kill') else process.terminate()
            process.join()


def _result(worker, job, trusted, limits, deadline):
    process, conn = worker
    what, path, _ = job
    try:
        ready = trusted or conn.poll(max(0.0, deadline - time.time()))
        if not ready:
            raise safe_load.LoadError('{}: reading it took longer than the time limit of {:g} s ({})'.format(
                safe_load.named(what, path), limits.seconds, safe_load._raise_hint('seconds')))
        status, value, stderr = conn.recv()
    except EOFError:
        process.join()
        raise _ended(process.exitcode, job, trusted, limits)
    if stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    return safe_load._outcome(status, value, job, limits, where='in a worker process')


def _ended(code, job, trusted, limits):
    """The error for a child that ended (exit ``code``) without a result."""
    what, path, _ = job
    name = safe_load.named(what, path)
    if trusted:
        return RuntimeError('the worker process reading {} ended (exit code {}) without a result, e.g. killed '
                            'for memory; {}=0 reads in this process'.format(name, code, settings.EVAL_LOAD_WORKERS))
    if code is not None and code < 0:
        sig = -code
        if sig in (signal.SIGALRM, signal.SIGXCPU):
            return safe_load.LoadError('{}: reading it took longer than the time limit of {:g} s ({})'.format(
                name, limits.seconds, safe_load._raise_hint('seconds')))
        if sig == signal.SIGKILL:
            return safe_load.LoadError('{}: the process reading it was killed ({}), e.g. by the system for lack '
                                       'of memory'.format(name, safe_load.signal_name(sig)))
        return safe_load.LoadError('{}: the process reading it crashed ({}): the file is malformed'.format(
            name, safe_load.signal_name(sig)))
    return safe_load.LoadError('{}: the process reading it ended with exit code {} without a result'.format(
        name, code))
