"""Reading ``kradar-eval``'s two pickles: in two worker processes while this one starts numba.

Unpickling 20,000 frames and checking them costs about a second of CPU per file, and numba's one-time
start-up another second. Forked workers read one file each and turn it into a few flat arrays (annotations
checked and concatenated, or infos / results gathered), which alone come back through a pipe, while the
caller's ``meanwhile`` (the evaluator's warm-up) runs here: three jobs side by side instead of one after
the other.

In process, one after the other: files under ``MIN_PARALLEL_BYTES`` together, one CPU, no ``fork``
(only Linux forks here: macOS and Windows spawn, which costs a fresh interpreter), or
``KRADAR_EVAL_LOAD_WORKERS=0``. ``KRADAR_EVAL_LOAD_WORKERS=1`` uses the workers whatever the size.
Errors read the same either way: a ValueError naming the file, or the frame, field and value (any other
exception in a worker comes back as a RuntimeError carrying the worker's traceback).
"""
import gc
import os
import pickle
import sys
import traceback

from .. import settings
from . import safe_pickle
from .validation import check_side

ENV_VAR = 'KRADAR_EVAL_LOAD_WORKERS'
#: smaller inputs (both files together) are read in process: forking would cost more than it overlaps
MIN_PARALLEL_BYTES = 4 << 20
_KEPT = []   # a worker's unpickled frames: the worker exits without spending time freeing them


def load_pickle(path, what, trusted=False):
    """The object pickled in ``path``; ``what`` (e.g. '--gt-annos') names it in the ValueError raised for
    a missing file, a module missing to unpickle it, a class ``safe_pickle`` refuses (unless ``trusted``),
    or a corrupt pickle. The garbage collector pauses
    while it reads: a pickle of many small arrays would otherwise trigger collections that find nothing."""
    if not os.path.isfile(path):
        raise ValueError('{} {!r}: no such file'.format(what, path))
    enabled = gc.isenabled()
    gc.disable()
    try:
        with open(path, 'rb') as f:
            return safe_pickle.load(f, trusted)
    except safe_pickle.RefusedPickleError as exc:
        raise ValueError('{} {!r}: {}'.format(what, path, exc))
    except ImportError as exc:
        raise ValueError('{} {!r} needs a module that is not installed to unpickle ({}); save plain numpy '
                         'arrays instead'.format(what, path, exc))
    except Exception as exc:
        raise ValueError('{} {!r}: cannot read the pickle ({}: {})'.format(what, path, type(exc).__name__, exc))
    finally:
        if enabled:
            gc.enable()


def read_checked(gt_path, dt_path, fields, meanwhile=None, trusted=False):
    """(gt, dt) :class:`validation.CheckedSide` of two annotation pickles, checked for the optional
    ``fields`` the evaluation reads (``kradar_eval.fields_read``). ``meanwhile()`` runs in this process
    while workers read; it is not called when the files are read in process."""
    return read_pair((('--gt-annos', gt_path, lambda annos: check_side(annos, 'gt_annos', fields)),
                      ('--dt-annos', dt_path, lambda annos: check_side(annos, 'dt_annos', fields))), meanwhile,
                     trusted)


def read_pair(jobs, meanwhile=None, trusted=False):
    """``(convert(load_pickle(path, what)) for what, path, convert in jobs)`` for two jobs: each in a forked
    worker (``convert`` runs there and only its result comes back) while ``meanwhile()`` runs here, or both
    in process, one after the other (``meanwhile`` not called); see the module docstring for which."""
    context = _fork_context(*[path for _, path, _ in jobs])
    if context is None:
        objects = [load_pickle(path, what, trusted) for what, path, _ in jobs]
        return tuple(convert(obj) for obj, (_, _, convert) in zip(objects, jobs))
    workers = []
    try:
        for job in jobs:
            workers.append(_start(context, job, trusted))
        if meanwhile is not None:
            meanwhile()
        return tuple(_result(worker, job) for worker, job in zip(workers, jobs))
    finally:
        for process, conn in workers:
            conn.close()
            if process.is_alive():
                process.terminate()
            process.join()


def _fork_context(*paths):
    """multiprocessing's fork context when the workers should read, else None."""
    choice = settings.raw(ENV_VAR).lower()
    if choice in ('0', 'false', 'no', 'off'):
        return None
    if choice in ('', 'auto'):
        try:
            size = sum(os.path.getsize(p) for p in paths)
        except OSError:
            return None          # a missing file: read in process, which names it
        if size < MIN_PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
            return None
    if not sys.platform.startswith('linux'):
        return None
    import multiprocessing
    if 'fork' not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
        return None          # a daemonic process may not have children
    return multiprocessing.get_context('fork')


def _start(context, job, trusted):
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_worker, args=(send, job, trusted), daemon=True,
                              name='kradar-eval-read{}'.format(job[0]))
    process.start()
    send.close()     # this process keeps only the reading end: a worker that dies gives EOFError
    return process, receive


def _worker(conn, job, trusted):
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the parent's to handle; it ends us
    what, path, convert = job
    try:
        obj = load_pickle(path, what, trusted)
        _KEPT.append(obj)
        out = ('ok', convert(obj))
    except ValueError as exc:
        out = ('value', str(exc))
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it with this traceback
        out = ('error', '{}: {}\n{}'.format(type(exc).__name__, exc, traceback.format_exc()))
    conn.send(out)
    conn.close()


def _result(worker, job):
    process, conn = worker
    what, path, _ = job
    try:
        status, value = conn.recv()
    except EOFError:
        process.join()
        raise RuntimeError('the worker process reading {} {!r} ended (exit code {}) without a result, e.g. '
                           'killed for memory; {}=0 reads in this process'.format(
                               what, path, process.exitcode, ENV_VAR))
    if status == 'ok':
        return value
    if status == 'value':
        raise ValueError(value)
    raise RuntimeError('reading {} {!r} in a worker process failed: {}'.format(what, path, value))
