"""Loading the files a user names (pickles, ``.npz``, JSON): one policy for every reader.

* **What a file may hold.** Pickles are read by :mod:`safe_pickle` (allowed names only, numpy objects rebuilt
  from checked parts, never numpy's own unpickling state), ``.npz`` files by ``np.load(allow_pickle=False)``
  after each member's header was checked (plain dtype, element limits), JSON by ``json`` after a nesting
  check (no recursion overflow), UTF-8 with or without a byte-order mark.
* **Bounded cost.** :class:`Limits`: the file's size, the elements of one array and of the whole content
  (expanded: shared references count each time), the memory and the time of reading. Each has a
  ``KRADAR_LOAD_*`` setting and a ``kradar-eval`` flag.
* **A child process.** An untrusted file is read, and converted by the caller's ``convert``, in a forked child
  with an address-space limit (``RLIMIT_AS``: its size at the fork plus ``Limits.memory_mb``, or 8x the file
  size when larger) and a time limit (``SIGALRM``); only the converted result comes back through a pipe while the
  parent runs its ``meanwhile``. Without fork (not Linux, a daemonic process) it is read in process with the
  element limits only.
* **One line per bad file.** Every failure is a :class:`LoadError` (a ValueError) naming the file as given: what
  is wrong with its content, which limit it exceeded, or what happened to a child that sent no result (the time
  limit, ``SIGALRM``/``SIGXCPU``; ``SIGKILL``, e.g. out of memory; another signal: a crash), never a traceback.
  An untrusted child's standard error is shown only when the read succeeded: for a bad file the error line is all
  the user sees.

``trusted=True`` (``--trust-pickle``) reads pickles with the plain unpickler, in process for small files and
in worker processes without limits for large ones (``KRADAR_EVAL_LOAD_WORKERS``), as before.
"""
import collections
import gc
import os
import signal
import sys
import time
import traceback

from .. import settings
from . import safe_pickle

#: a trusted pair of files smaller than this (together) is read in process: forking would cost more
MIN_PARALLEL_BYTES = 4 << 20
_KEPT = []   # a child's loaded content: the child exits without spending time freeing it
_GRACE = 2.0       # seconds the parent waits past a child's own time limit before it ends the child
_MAX_STDERR = 64 << 10     # bytes of an untrusted child's standard error shown after a successful read


class LoadError(ValueError):
    """A file that cannot be read within the policy: the message is one line naming the file."""


class Limits(collections.namedtuple('Limits', 'max_file_mb max_array_elements max_elements memory_mb seconds')):
    """The bounds of reading one file; defaults from the ``KRADAR_LOAD_*`` settings."""

    @classmethod
    def from_settings(cls, environ=None, **overrides):
        values = dict((field, settings.number(name, environ)) for field, name in LIMIT_SETTINGS.items())
        values.update((k, v) for k, v in overrides.items() if v is not None)
        for field, value in values.items():
            if not value > 0:
                raise ValueError('{} must be positive, got {}'.format(FLAGS[field], value))
        return cls(**values)

    def pickle_limits(self):
        return safe_pickle.Limits(self.max_array_elements, self.max_elements)


#: Limits field -> its setting and its kradar-eval flag
LIMIT_SETTINGS = collections.OrderedDict([
    ('max_file_mb', settings.LOAD_MAX_FILE_MB), ('max_array_elements', settings.LOAD_MAX_ARRAY_ELEMENTS),
    ('max_elements', settings.LOAD_MAX_ELEMENTS), ('memory_mb', settings.LOAD_MEMORY_MB),
    ('seconds', settings.LOAD_SECONDS)])
FLAGS = {'max_file_mb': '--max-file-mb', 'max_array_elements': '--max-array-elements',
         'max_elements': '--max-elements', 'memory_mb': '--max-memory-mb', 'seconds': '--max-load-seconds'}


def _raise_hint(field):
    return '{} or {} raises it'.format(FLAGS[field], LIMIT_SETTINGS[field])


def named(what, path):
    """How an error names a file: the option and the path as given, e.g. ``--results 'r.pkl'``."""
    return '{} {!r}'.format(what, path) if what else repr(path)


def one_line(text, width=600):
    text = ' '.join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + '...'


def _about(what, path, message):
    """``message`` as one line that names the file."""
    message = one_line(message)
    prefix = named(what, path)
    return message if message.startswith(prefix) else '{}: {}'.format(prefix, message)


def check_file(path, what, limits):
    """A LoadError unless ``path`` is a regular file within ``limits.max_file_mb``; returns its size."""
    if not isinstance(path, str) or not path:
        raise LoadError('{}: expected a file name, got {!r}'.format(what, path))
    if os.path.isdir(path):
        raise LoadError('{}: is a directory, not a file'.format(named(what, path)))
    if not os.path.exists(path):
        raise LoadError('{}: no such file'.format(named(what, path)))
    if not os.path.isfile(path):
        raise LoadError('{}: is not a regular file'.format(named(what, path)))
    size = os.path.getsize(path)
    if size > limits.max_file_mb * (1 << 20):
        raise LoadError('{}: the file has {:.1f} MB, more than the limit of {:g} MB ({})'.format(
            named(what, path), size / float(1 << 20), limits.max_file_mb, _raise_hint('max_file_mb')))
    return size


def file_format(path):
    """'npz', 'json' or 'pickle': by the file's first bytes (a zip is an npz), else by its extension."""
    with open(path, 'rb') as f:
        head = f.read(4)
    if head.startswith(b'PK\x03\x04') or head == b'PK\x05\x06' or path.lower().endswith('.npz'):
        return 'npz'
    if path.lower().endswith('.json'):
        return 'json'
    return 'pickle'


def load_file(path, what, trusted=False, limits=None):
    """The content of ``path`` read in this process under the policy (no address-space or time limit:
    :func:`read` adds those). A LoadError names the file for anything that goes wrong; MemoryError and
    RecursionError pass."""
    from . import safe_files
    limits = limits or Limits.from_settings()
    check_file(path, what, limits)
    try:
        kind = file_format(path)
        if kind == 'npz':
            return safe_files.read_npz(path, limits)
        if kind == 'json':
            return safe_files.read_json(path, limits)
        enabled = gc.isenabled()
        gc.disable()          # many small arrays trigger collections that find nothing
        try:
            with open(path, 'rb') as f:
                return safe_pickle.load(f, trusted, limits.pickle_limits())
        finally:
            if enabled:
                gc.enable()
    except (LoadError, MemoryError, RecursionError):
        raise
    except (safe_pickle.RefusedPickleError, safe_files.ContentError) as exc:
        raise LoadError(_about(what, path, exc))
    except ImportError as exc:
        raise LoadError('{} needs a module that is not installed to unpickle ({}); save plain numpy arrays '
                        'instead'.format(named(what, path), one_line(exc)))
    except Exception as exc:  # noqa: BLE001 - a corrupt file of any kind is one line naming it
        raise LoadError('{}: cannot read the {} ({}: {})'.format(
            named(what, path), {'npz': '.npz file', 'json': 'JSON'}.get(kind, 'pickle'), type(exc).__name__,
            one_line(exc, 300)))


def _attempt(job, trusted, limits, child=False):
    """('ok', convert(load_file(...))) or a failure: ('value', one line), ('memory', None), ('error', traceback).
    The same in a child process and in process (``child``: the loaded content is moved out of the garbage
    collector's sight, ``gc.freeze``, as the child exits without freeing it)."""
    what, path, convert = job
    try:
        obj = load_file(path, what, trusted, limits)
        _KEPT.append(obj)
        if child and hasattr(gc, 'freeze'):
            gc.freeze()
        return 'ok', convert(obj) if convert is not None else obj
    except MemoryError:
        _KEPT[:] = []
        return 'memory', None
    except RecursionError:
        return 'value', _about(what, path, 'the content is nested too deeply to read')
    except ValueError as exc:
        return 'value', _about(what, path, exc)
    except BaseException as exc:  # noqa: BLE001 - wrong content of any type is one line naming the file
        if trusted or not isinstance(exc, Exception):     # a trusted pickle's error, or e.g. SystemExit: traceback
            return 'error', '{}: {}\n{}'.format(type(exc).__name__, exc, traceback.format_exc())
        return 'value', _about(what, path, 'unexpected content ({}: {})'.format(type(exc).__name__, exc))


def _outcome(status, value, job, limits, where='in process'):
    what, path, _ = job
    if status == 'ok':
        return value
    if status == 'value':
        raise LoadError(value)
    if status == 'memory':
        raise LoadError('{}: reading it needs more memory than the limit of {:g} MiB ({})'.format(
            named(what, path), limits.memory_mb, _raise_hint('memory_mb')))
    raise RuntimeError('reading {} {} failed: {}'.format(named(what, path), where, value))


def _fork_context(paths, trusted):
    """multiprocessing's fork context when children should read, else None. Untrusted files: always where
    fork exists; trusted ones as ``KRADAR_EVAL_LOAD_WORKERS`` says (auto: 4 MiB together, 2+ CPUs)."""
    if not sys.platform.startswith('linux'):
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
            if size < MIN_PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
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


def _limit_self(limits, size):
    """In the child: the address-space and time limits (never above a limit already set)."""
    import resource     # Unix only: children are forked on Linux alone
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = _vm_bytes() + max(int(limits.memory_mb * (1 << 20)), 8 * size)     # the limit, or 8x the file size
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
    out = _attempt(job, trusted, limits, child=True)
    try:
        conn.send(out + (captured() if out[0] == 'ok' else '',))
    except MemoryError:
        _KEPT[:] = []
        conn.send(('memory', None, ''))
    conn.close()


def _start(context, job, trusted, limits):
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, job, trusted, limits), daemon=True,
                              name='kradar-eval-read{}'.format(job[0]))
    process.start()
    send.close()     # this process keeps only the reading end: a child that dies gives EOFError
    return process, receive


def _run(context, jobs, meanwhile, trusted, limits):
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
            raise _too_slow(named(what, path), limits)
        status, value, stderr = conn.recv()
    except EOFError:
        process.join()
        raise _ended(process.exitcode, job, trusted, limits)
    if stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    return _outcome(status, value, job, limits, where='in a worker process')


def _ended(code, job, trusted, limits):
    """The error for a child that ended (exit ``code``) without a result."""
    what, path, _ = job
    name = named(what, path)
    if trusted:
        return RuntimeError('the worker process reading {} ended (exit code {}) without a result, e.g. killed '
                            'for memory; {}=0 reads in this process'.format(name, code, settings.EVAL_LOAD_WORKERS))
    if code is not None and code < 0:
        sig = -code
        if sig in (signal.SIGALRM, signal.SIGXCPU):
            return _too_slow(name, limits)
        if sig == signal.SIGKILL:
            return LoadError('{}: the process reading it was killed ({}), e.g. by the system for lack of '
                             'memory'.format(name, _signal_name(sig)))
        return LoadError('{}: the process reading it crashed ({}): the file is malformed'.format(
            name, _signal_name(sig)))
    return LoadError('{}: the process reading it ended with exit code {} without a result'.format(name, code))


def _too_slow(name, limits):
    return LoadError('{}: reading it took longer than the time limit of {:g} s ({})'.format(
        name, limits.seconds, _raise_hint('seconds')))


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return 'signal {}'.format(number)


def read(jobs, meanwhile=None, trusted=False, limits=None):
    """``convert(content of path)`` for each ``(what, path, convert)`` job (``convert`` None: the content),
    each file in its own child process (see the module docstring) while ``meanwhile()`` runs here; in process
    where no child can be forked (``meanwhile`` then not called)."""
    limits = limits or Limits.from_settings()
    jobs = list(jobs)
    for what, path, _ in jobs:
        check_file(path, what, limits)          # a missing file or directory: named before any fork
    context = _fork_context([path for _, path, _ in jobs], trusted)
    if context is None:
        return tuple(_outcome(*_attempt(job, trusted, limits) + (job, limits)) for job in jobs)
    return _run(context, jobs, meanwhile, trusted, limits)


def read_one(path, what, convert=None, trusted=False, limits=None):
    """:func:`read` of one file."""
    return read([(what, path, convert)], trusted=trusted, limits=limits)[0]
