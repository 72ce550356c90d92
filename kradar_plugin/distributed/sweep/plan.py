"""The checkpoint sweep's plan: which checkpoints one eval-only launch evaluates, in which order, and when a
watching sweep stops.

A sweep is asked for in three ways, resolved here into one :class:`SweepRequest`:

- the command line of our ``tools/train.py``: ``--eval-only --checkpoints A.pth B.pth 'work_dirs/x/epoch_*.pth'``
  or ``--watch DIR`` (with ``--watch-idle S``, ``--watch-final-epoch N``), ``--eval-key KEY``,
  ``--sweep-stop-on-error``;
- the runner config: ``runner.eval_checkpoints`` (a list, or one string of paths/globs), ``runner.eval_watch``,
  ``runner.eval_watch_idle``, ``runner.eval_watch_poll``, ``runner.eval_final_epoch``, ``runner.eval_key``,
  ``runner.eval_stop_on_error``;
- the environment (for unmodified train scripts, with ``KRADAR_EVAL_ONLY=1``): ``KRADAR_EVAL_CHECKPOINTS``,
  ``KRADAR_EVAL_WATCH``, ``KRADAR_EVAL_WATCH_IDLE``, ``KRADAR_EVAL_FINAL_EPOCH``, ``KRADAR_EVAL_KEY``,
  ``KRADAR_SWEEP_STOP_ON_ERROR``; they override the config.

Checkpoints are taken in epoch order (the number in ``epoch_<N>`` / ``iter_<N>``; names without one after
them, by modification time), each file once (``latest.pth`` links to a file already listed).
Standard library only (no torch, no mmcv).
"""
import glob
import os
import os.path as osp
import re

from ... import settings
from ..eval_mode import check_flag

# the runner config keys of a sweep (removed from the runner config before the runner is built)
CONFIG_KEYS = ('eval_checkpoints', 'eval_watch', 'eval_watch_idle', 'eval_watch_poll', 'eval_final_epoch',
               'eval_key', 'eval_stop_on_error')
DEFAULT_WATCH_IDLE_S = 3600.0
DEFAULT_WATCH_POLL_S = 10.0
# the checkpoints a watched directory offers: mmcv's and mmengine's per-epoch / per-iteration files
WATCH_PATTERNS = ('epoch_*.pth', 'iter_*.pth')
_NUMBER = re.compile(r'(?:^|_)(epoch|iter)_(\d+)$')


class SweepRequest(object):
    """What the user asked for: ``checkpoints`` (paths or globs, in the order given), ``watch`` (a
    directory, or a glob of checkpoint files), ``watch_idle_s``, ``watch_poll_s``, ``final_epoch``,
    ``eval_key`` (None: the headline BEV AP of the first class) and ``stop_on_error``."""

    def __init__(self, checkpoints=(), watch=None, watch_idle_s=DEFAULT_WATCH_IDLE_S,
                 watch_poll_s=DEFAULT_WATCH_POLL_S, final_epoch=None, eval_key=None, stop_on_error=False):
        self.checkpoints = list(checkpoints)
        self.watch = watch or None
        self.watch_idle_s = _positive_float(watch_idle_s, 'eval_watch_idle')
        self.watch_poll_s = _positive_float(watch_poll_s, 'eval_watch_poll')
        self.final_epoch = None if final_epoch in (None, '') else _positive_int(final_epoch, 'eval_final_epoch')
        self.eval_key = eval_key or None
        self.stop_on_error = bool(stop_on_error)
        if self.checkpoints and self.watch:
            raise ValueError('a sweep takes either a list of checkpoints or a directory to watch, not both')

    @property
    def active(self):
        return bool(self.checkpoints or self.watch)

    def as_dict(self):
        return dict(checkpoints=self.checkpoints, watch=self.watch, watch_idle_s=self.watch_idle_s,
                    watch_poll_s=self.watch_poll_s, final_epoch=self.final_epoch, eval_key=self.eval_key,
                    stop_on_error=self.stop_on_error)

    def __repr__(self):
        return 'SweepRequest({})'.format(', '.join('{}={!r}'.format(k, v) for k, v in sorted(self.as_dict().items())))


def _positive_float(value, source):
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = 0.0
    if number <= 0:
        raise ValueError('{}={!r}: expected a positive number of seconds'.format(source, value))
    return number


def _positive_int(value, source):
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if isinstance(value, bool) or number <= 0:
        raise ValueError('{}={!r}: expected a positive integer'.format(source, value))
    return number


def split_checkpoints(value):
    """A list of paths/globs from a config value or a variable: a list/tuple as is, a string split at
    commas and whitespace."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = []
        for item in value:
            items.extend(split_checkpoints(item))
        return items
    return [part for part in re.split(r'[,\s]+', str(value)) if part]


def request_from(config=None, environ=None):
    """The :class:`SweepRequest` of a runner config's sweep keys (a dict; they are left in it) with the
    environment's overrides."""
    config = dict(config or {})
    environ = os.environ if environ is None else environ
    values = dict(checkpoints=split_checkpoints(config.get('eval_checkpoints')),
                  watch=config.get('eval_watch'),
                  watch_idle_s=config.get('eval_watch_idle', DEFAULT_WATCH_IDLE_S),
                  watch_poll_s=config.get('eval_watch_poll', DEFAULT_WATCH_POLL_S),
                  final_epoch=config.get('eval_final_epoch'),
                  eval_key=config.get('eval_key'),
                  stop_on_error=check_flag(config.get('eval_stop_on_error', False), 'runner.eval_stop_on_error'))
    if settings.raw(settings.EVAL_CHECKPOINTS, environ):
        values['checkpoints'] = split_checkpoints(settings.raw(settings.EVAL_CHECKPOINTS, environ))
        values['watch'] = None
    if settings.raw(settings.EVAL_WATCH, environ):
        values['watch'] = settings.raw(settings.EVAL_WATCH, environ)
        values['checkpoints'] = []
    if settings.raw(settings.EVAL_WATCH_IDLE, environ):
        values['watch_idle_s'] = _positive_float(settings.raw(settings.EVAL_WATCH_IDLE, environ),
                                                 settings.EVAL_WATCH_IDLE)
    if settings.raw(settings.EVAL_FINAL_EPOCH, environ):
        values['final_epoch'] = settings.positive_int(settings.EVAL_FINAL_EPOCH, environ)
    if settings.raw(settings.EVAL_KEY, environ):
        values['eval_key'] = settings.raw(settings.EVAL_KEY, environ)
    stop = settings.flag(settings.SWEEP_STOP_ON_ERROR, environ)
    if stop is not None:
        values['stop_on_error'] = stop
    return SweepRequest(**values)


def pop_config(runner_cfg):
    """Remove the sweep keys from a runner config (a dict) and return them as a dict."""
    return dict((key, runner_cfg.pop(key)) for key in CONFIG_KEYS if key in runner_cfg)


def add_arguments(parser):
    """The sweep options of a train script (argparse)."""
    group = parser.add_argument_group('checkpoint sweep (with --eval-only)')
    group.add_argument('--checkpoints', nargs='+', metavar='CKPT', default=None,
                       help='evaluate each checkpoint (paths or quoted globs) in epoch order in one launch')
    group.add_argument('--watch', metavar='DIR', default=None,
                       help='evaluate each new epoch_*/iter_*.pth of DIR once, as it appears complete')
    group.add_argument('--watch-idle', type=float, default=None, metavar='S',
                       help='stop watching after S seconds without a new checkpoint (default {:.0f})'.format(
                           DEFAULT_WATCH_IDLE_S))
    group.add_argument('--watch-poll', type=float, default=None, metavar='S',
                       help='seconds between two looks at the watched directory (default {:.0f})'.format(
                           DEFAULT_WATCH_POLL_S))
    group.add_argument('--watch-final-epoch', type=int, default=None, metavar='N',
                       help='stop watching once the checkpoint of epoch N is evaluated')
    group.add_argument('--eval-key', default=None, metavar='KEY',
                       help='the metric that names the best checkpoint (default: the headline BEV AP of the '
                            'first class); KEY:min for a metric where lower is better')
    group.add_argument('--sweep-stop-on-error', action='store_true',
                       help='end the sweep at the first checkpoint that fails to load or to evaluate')
    return parser


def config_from_args(args):
    """The runner config keys for the sweep options parsed by :func:`add_arguments` (only those given)."""
    out = {}
    if args.checkpoints:
        out['eval_checkpoints'] = list(args.checkpoints)
    if args.watch:
        out['eval_watch'] = args.watch
    if args.watch_idle is not None:
        out['eval_watch_idle'] = args.watch_idle
    if args.watch_poll is not None:
        out['eval_watch_poll'] = args.watch_poll
    if args.watch_final_epoch is not None:
        out['eval_final_epoch'] = args.watch_final_epoch
    if args.eval_key:
        out['eval_key'] = args.eval_key
    if args.sweep_stop_on_error:
        out['eval_stop_on_error'] = True
    return out


def checkpoint_number(path):
    """(kind, N) for ``.../epoch_N.pth`` / ``iter_N.pth`` (also ``best_x_epoch_N.pth``), else (None, None)."""
    match = _NUMBER.search(osp.splitext(osp.basename(str(path)))[0])
    return (match.group(1), int(match.group(2))) if match else (None, None)


def checkpoint_epoch(path):
    """The epoch (or iteration) number in the checkpoint's name; None without one."""
    return checkpoint_number(path)[1]


def stem(path):
    """``results_<stem>.pkl``: the checkpoint's file name without its extension."""
    return osp.splitext(osp.basename(str(path)))[0]


def _order_key(path):
    kind, number = checkpoint_number(path)
    try:
        mtime = osp.getmtime(path)
    except OSError:
        mtime = 0.0
    return (0 if number is not None else 1, kind or '', number if number is not None else 0, mtime, path)


def expand(specs, missing_ok=False):
    """The checkpoint files named by ``specs`` (paths or globs), each once (by real path), in epoch order.

    A path that names no file is returned as given (its load then fails and is recorded) unless
    ``missing_ok``; a glob that matches nothing raises ValueError (a typo would otherwise sweep nothing)."""
    found, seen = [], set()
    for spec in specs:
        spec = osp.expanduser(str(spec))
        if glob.has_magic(spec):
            matches = sorted(p for p in glob.glob(spec) if osp.isfile(p))
            if not matches:
                raise ValueError('no checkpoint matches {!r}'.format(spec))
        elif osp.exists(spec) or not missing_ok:
            matches = [spec]
        else:
            matches = []
        for path in matches:
            path = osp.abspath(path)
            real = osp.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            found.append(real if osp.islink(path) else path)
    return sorted(found, key=_order_key)


def watched_files(watch):
    """The checkpoint files in a watched directory (or matching a watched glob) now, without links."""
    if osp.isdir(watch):
        names = []
        for pattern in WATCH_PATTERNS:
            names.extend(glob.glob(osp.join(watch, pattern)))
    else:
        names = glob.glob(watch)
    return sorted((osp.abspath(p) for p in names if osp.isfile(p) and not osp.islink(p)), key=_order_key)


def file_state(path):
    """(size, mtime) of a file, None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime)


class Watcher(object):
    """Decides, at each look at the watched directory, which checkpoint is due (or that the watch is over).

    A checkpoint is due once it is complete -- its size and modification time unchanged since the previous
    look, or last modified at least ``settle_s`` ago (mmcv and mmengine write checkpoints in place, not by
    rename) -- and not already done with that
    same size and time (``done(path, state)``, from the sweep record, so a restarted watcher skips what it
    has evaluated). The watch ends after ``idle_s`` seconds without a due checkpoint, or once the
    checkpoint of ``final_epoch`` is done. ``clock`` and ``list_files`` are injectable for tests."""

    def __init__(self, watch, idle_s, final_epoch=None, done=None, clock=None, list_files=None,
                 settle_s=DEFAULT_WATCH_POLL_S):
        import time
        self.wall_clock = time.time
        self.settle_s = settle_s
        self.watch = watch
        self.idle_s = idle_s
        self.final_epoch = final_epoch
        self.done = done or (lambda path, state: False)
        self.clock = clock or time.time
        self.list_files = list_files or (lambda: watched_files(watch))
        self.seen = {}
        self.last_progress = self.clock()
        self.final_done = False

    def mark_done(self, path):
        """A checkpoint was evaluated (or failed): the idle time restarts; the final epoch ends the watch."""
        self.last_progress = self.clock()
        if self.final_epoch is not None and checkpoint_epoch(path) == self.final_epoch:
            self.final_done = True

    def next_due(self):
        """('checkpoint', path) | ('wait', None) | ('stop', reason)."""
        if self.final_done:
            return 'stop', 'the checkpoint of the final epoch {} is evaluated'.format(self.final_epoch)
        for path in self.list_files():
            state = file_state(path)
            if state is None:
                continue
            previous, self.seen[path] = self.seen.get(path), state
            if self.done(path, state):
                if self.final_epoch is not None and checkpoint_epoch(path) == self.final_epoch:
                    self.final_done = True
                    return 'stop', 'the checkpoint of the final epoch {} was evaluated before'.format(
                        self.final_epoch)
                continue
            if previous == state or self.wall_clock() - state[1] >= self.settle_s:
                return 'checkpoint', path
        if self.clock() - self.last_progress >= self.idle_s:
            return 'stop', 'no new checkpoint for {:.0f} s'.format(self.idle_s)
        return 'wait', None
