"""Fail fast in a distributed job: the failing rank prints its own traceback, tagged with its rank, and
leaves at once instead of letting its peers wait in a collective until the distributed timeout.

Exiting with ``os._exit`` skips interpreter shutdown (dataloader workers, process-group teardown, atexit
handlers), any of which can hang while peers are blocked. Before leaving, the exception is written to the
torchelastic error file (``TORCHELASTIC_ERROR_FILE``) so that ``torchrun``'s summary shows the real
traceback and the right root-cause rank; the launcher then terminates the remaining ranks.
"""
import json
import os
import sys
import time
import traceback


def process_group():
    """(rank, world size) of the initialised torch.distributed process group; None without one."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    return None


def rank_tag():
    """``[rank R/W]`` from torch.distributed if initialised, else from the launcher's environment."""
    rank, world = process_group() or (int(os.environ.get('RANK', 0)), int(os.environ.get('WORLD_SIZE', 1)))
    return '[rank {}/{}]'.format(rank, world)


def tagged(text, tag=None):
    """Prefix every line of ``text`` with the rank tag."""
    tag = tag or rank_tag()
    return ''.join('{} {}\n'.format(tag, line) for line in text.rstrip('\n').split('\n'))


def add_note(exc, note):
    """Attach ``note`` to ``exc`` as a PEP 678 note (``exc.__notes__``; ``add_note`` on Python >= 3.11), so
    that what to do about a failure travels with the exception to whoever reports it."""
    if hasattr(exc, 'add_note'):
        exc.add_note(note)
    else:
        if not isinstance(getattr(exc, '__notes__', None), list):
            exc.__notes__ = []
        exc.__notes__.append(note)
    return exc


def notes_text(exc):
    """The notes attached to ``exc``, one after the other ('' without any)."""
    notes = getattr(exc, '__notes__', None)
    return '\n'.join(str(n) for n in notes) if isinstance(notes, (list, tuple)) else ''


def traceback_shows_notes(exc):
    """True when a formatted traceback of ``exc`` already holds its notes: Python >= 3.11 prints them, and
    so does an older Python once the ``exceptiongroup`` backport (pytest, anyio, ...) is imported."""
    note = notes_text(exc)
    return bool(note) and note in ''.join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _format_exc_with_notes(exc):
    """``traceback.format_exc()`` with the exception's notes, once."""
    text = traceback.format_exc()
    if notes_text(exc) and not traceback_shows_notes(exc):
        text += notes_text(exc).rstrip('\n') + '\n'
    return text


def record_to_error_file(exc, extra=None, callstack=None):
    """Write ``exc`` (being handled, or with its ``callstack`` text) to the torchelastic error file, if the
    launcher asked for one.

    Same JSON layout as torchelastic's ``ErrorHandler.record_exception``; ``extra`` (e.g. where the
    predictions were saved) is appended to the traceback that the launcher prints in its summary."""
    path = os.environ.get('TORCHELASTIC_ERROR_FILE')
    if not path:
        return
    callstack = callstack if callstack is not None else _format_exc_with_notes(exc)
    if extra:
        callstack += extra.rstrip('\n') + '\n'
    data = {'message': {'message': '{}: {}'.format(type(exc).__name__, exc),
                        'extraInfo': {'py_callstack': callstack, 'timestamp': str(int(time.time()))}}}
    try:
        with open(path, 'w') as f:
            json.dump(data, f)
    except Exception:  # the report on stderr is what matters; never mask the original error
        pass


# Messages of the errors a rank gets when ANOTHER rank has died (gloo / NCCL / c10d store).
PEER_FAILURE_MARKERS = ('Connection closed by peer', 'Connection reset by peer', 'Broken pipe',
                        'communicator was aborted', 'Connection refused')
# How long a rank that only lost a peer waits for the launcher to stop it before it exits by itself.
PEER_GRACE_S = 10.0
# How long it waits before it looks whether every worker of its own node is still alive.
LOCAL_SETTLE_S = 0.2


def is_peer_failure(exc):
    """True for the error a rank gets because another rank died (not a failure of its own)."""
    text = '{}: {}'.format(type(exc).__name__, exc)
    return any(marker in text for marker in PEER_FAILURE_MARKERS)


def _alive_children(ppid, proc='/proc'):
    """The pids of the live (not zombie) processes whose parent is ``ppid``; None where /proc cannot tell."""
    try:
        names = os.listdir(proc)
    except OSError:
        return None
    alive = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(proc, name, 'stat')) as f:
                fields = f.read().rsplit(')', 1)[1].split()   # after "pid (comm)": state ppid ...
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[1] == str(ppid) and fields[0] not in ('Z', 'X'):
            alive.append(int(name))
    return alive


def local_workers_all_alive(environ=None, proc='/proc'):
    """True when every worker the local launcher started (``LOCAL_WORLD_SIZE`` children of this process's
    parent, torchrun / torch.distributed.launch) is alive: a peer that died is then on another node, whose
    failure this node's launcher never sees. False when one is gone; None when it cannot tell (no
    ``LOCAL_WORLD_SIZE``, as under srun; no /proc)."""
    environ = os.environ if environ is None else environ
    try:
        local_world = int(environ.get('LOCAL_WORLD_SIZE', ''))
    except ValueError:
        return None
    alive = _alive_children(os.getppid(), proc)
    if alive is None or os.getpid() not in alive:
        return None
    return len(alive) >= local_world


def peer_address(exc):
    """The address gloo names in a lost-connection error (``[10.0.0.2]:45678``), or ''."""
    import re
    match = re.search(r'(\[[^\]]+\]:\d+)', str(exc))
    return match.group(1) if match else ''


def wait_if_peer_failure(exc, grace_s=PEER_GRACE_S):
    """Give the launcher time to see the rank that really failed first.

    torchrun names as root cause the failure with the smallest timestamp, in whole seconds, and breaks
    ties by rank order: a rank that merely lost its peer and exits in the same second would be blamed
    instead of the rank that raised. Waiting (bounded) lets the launcher record the real failure and stop
    this process; a launcher that does not stop it still sees it exit after ``grace_s``. When every worker
    of this node is alive, the lost rank is on another node (its own launcher reports it; this node's never
    sees it): this rank then leaves at once, naming the peer's address."""
    if is_peer_failure(exc) and int(os.environ.get('WORLD_SIZE', '1')) > 1:
        time.sleep(LOCAL_SETTLE_S)  # a local peer that closed its connections is then surely gone from /proc
        if local_workers_all_alive():
            sys.stderr.write('{} lost a peer on another node ({}): every worker of this node is alive; '
                             'that node\'s launcher names the lost rank. Leaving now.\n'.format(
                                 rank_tag(), peer_address(exc) or exc))
            sys.stderr.flush()
            return
        sys.stderr.write('{} lost a peer ({}); another rank failed first, see its traceback. Waiting up to '
                         '{:.0f} s for the launcher.\n'.format(rank_tag(), exc, grace_s))
        sys.stderr.flush()
        time.sleep(grace_s)


def report_and_exit(exc, stage, extra=None, exit_code=1):
    """Print the rank-tagged traceback of ``exc`` (call inside ``except``) and leave the process now
    (after a bounded wait when the error only says that another rank died first)."""
    tag = rank_tag()
    if is_peer_failure(exc):
        stage += ', after another rank failed'
    text = tagged(_format_exc_with_notes(exc), tag) + (tagged(extra, tag) if extra else '')
    sys.stdout.flush()
    sys.stderr.write('\n{} failed during {}: {}: {}\n{}'.format(tag, stage, type(exc).__name__, exc, text))
    sys.stderr.flush()
    wait_if_peer_failure(exc)
    record_to_error_file(exc, extra)
    os._exit(exit_code)


def install_error_file_hook():
    """In a torchelastic worker (``TORCHELASTIC_ERROR_FILE`` set), make an uncaught exception reach the
    launcher's summary with its traceback, as torch's ``@record`` would: train scripts without it
    (mmdet3d 0.17's and EchoFusion's ``tools/train.py``) otherwise leave ``error_file: <N/A>`` and no
    traceback. The original ``sys.excepthook`` still runs; an error file the process wrote itself (through
    ``@record`` or :func:`report_and_exit`) is kept. Returns True if installed."""
    path = os.environ.get('TORCHELASTIC_ERROR_FILE')
    if not path or getattr(sys.excepthook, '_kradar_error_file', False):
        return False
    previous = sys.excepthook

    def excepthook(exc_type, exc, tb):
        if not os.path.exists(path) and not issubclass(exc_type, KeyboardInterrupt):
            wait_if_peer_failure(exc)  # the rank that failed first is the root cause
            record_to_error_file(exc, callstack=''.join(traceback.format_exception(exc_type, exc, tb)))
        previous(exc_type, exc, tb)

    excepthook._kradar_error_file = True
    sys.excepthook = excepthook
    return True


# -- a rank that cannot connect at init (the rendezvous, or its peers' advertised addresses) -----------------
# what such an error says (gloo, the c10d store, the resolver)
CONNECTION_MARKERS = ('Connection refused', 'Connection reset', 'No route to host', 'Network is unreachable',
                      'timed out', 'Timed out', 'Name or service not known', 'Temporary failure in name resolution',
                      'Cannot assign requested address', 'DistNetworkError')
# how often the other ranks look whether one of them published an init failure
INIT_WATCH_S = 0.2


def is_connection_failure(exc):
    text = '{}: {}'.format(type(exc).__name__, exc)
    return any(marker in text for marker in CONNECTION_MARKERS)


def _init_failure_key(environ):
    """One key per launch attempt in the job's c10d store."""
    attempt = [environ.get(k, '') for k in ('TORCHELASTIC_RUN_ID', 'TORCHELASTIC_RESTART_COUNT', 'SLURM_JOB_ID',
                                            'SLURM_STEP_ID')]
    return 'kradar_plugin/init_failure/' + '/'.join(attempt)


class InitWatch(object):
    """While this rank starts its process group, watch the job's store (MASTER_ADDR:MASTER_PORT, which every
    rank reaches before gloo connects the ranks to each other) for another rank's init failure, and leave at
    once when one is published: a rank waiting for a peer that will never connect would otherwise wait out
    the whole timeout (rank 0 on the other node, in gloo's full-mesh connect)."""

    def __init__(self, environ=None):
        self.environ = dict(os.environ if environ is None else environ)
        self.key = _init_failure_key(self.environ)
        self.store = None
        self.done = False
        self.thread = None

    def _connect(self, timeout_s):
        import datetime
        from torch.distributed import TCPStore
        return TCPStore(self.environ['MASTER_ADDR'], int(self.environ['MASTER_PORT']), is_master=False,
                        timeout=datetime.timedelta(seconds=timeout_s))

    def start(self, timeout_s=60.0):
        import threading
        if int(self.environ.get('WORLD_SIZE', '1') or 1) < 2 or not self.environ.get('MASTER_ADDR'):
            return self
        self.timeout_s = timeout_s
        self.thread = threading.Thread(target=self._watch, name='kradar-init-watch', daemon=True)
        self.thread.start()
        return self

    def _listening(self):
        """Wait (the GIL released, in Python's socket calls) until the store accepts connections: building a
        TCPStore client holds the GIL while it retries, which would stop this rank's own init (rank 0 under
        Slurm starts the store server in it). False when it never does (then nothing is watched)."""
        import socket
        deadline = time.time() + self.timeout_s
        while not self.done and time.time() < deadline:
            try:
                socket.create_connection((self.environ['MASTER_ADDR'], int(self.environ['MASTER_PORT'])),
                                         timeout=INIT_WATCH_S).close()
                return True
            except OSError:
                time.sleep(INIT_WATCH_S)
        return False

    def _watch(self):
        import datetime
        try:
            if not self._listening():
                return
            self.store = self._connect(self.timeout_s)
            while not self.done:
                try:
                    self.store.wait([self.key], datetime.timedelta(seconds=INIT_WATCH_S))
                except Exception:   # not published yet (the wait's timeout)
                    continue
                if self.done:
                    return
                text = self.store.get(self.key).decode('utf-8', 'replace')
                sys.stderr.write('{} {}; leaving now instead of waiting for it until the timeout.\n'.format(
                    rank_tag(), text))
                sys.stderr.flush()
                os._exit(1)
        except Exception:   # no store to watch: the init's own error or timeout says what happened
            return
        finally:
            self.store = None   # released in this thread: a store left to interpreter exit aborts the process

    def stop(self):
        """End the watch and wait for the thread (at most one look, INIT_WATCH_S, while it is connected)."""
        self.done = True
        if self.thread is not None and self.thread.is_alive():
            self.thread.join(4 * INIT_WATCH_S)

    def publish(self, text):
        """Tell the other ranks (best effort: the store may be what this rank could not reach)."""
        try:
            self._connect(5.0).set(self.key, text)
        except Exception:
            pass


def guarded_init(init, *args, **kwargs):
    """``init(*args, **kwargs)`` (a process-group init) under an :class:`InitWatch`. A rank that cannot
    connect prints one message, naming the address it tried, what the host's name resolves to, gloo's
    interface and the fix (``host_network.init_failure_text``), tells the other ranks, and leaves."""
    watch = InitWatch().start()
    try:
        return init(*args, **kwargs)
    except Exception as exc:
        if not is_connection_failure(exc) or int(watch.environ.get('WORLD_SIZE', '1') or 1) < 2:
            raise
        from .host_network import init_failure_text, address_tried
        import socket
        watch.stop()
        tag = rank_tag()
        head = ('could not connect to the other ranks while starting the process group: {}: {}'.format(
            type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else ''))
        sys.stdout.flush()
        sys.stderr.write('\n{} {}\n{}'.format(tag, head, tagged(init_failure_text(exc), tag)))
        sys.stderr.flush()
        watch.publish('{} (host {}) could not connect at init (address tried: {}); its output names the '
                      'cause and the fix'.format(tag.strip('[]'), socket.gethostname(),
                                                 address_tried(str(exc)) or 'see its output'))
        record_to_error_file(exc, init_failure_text(exc))
        os._exit(1)
    finally:
        watch.stop()
