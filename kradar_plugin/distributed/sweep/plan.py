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
  ``KRADAR_SWEEP_STOP_ON_ERROR``; they override the config, and a list or a watch they name replaces the
  config's.

These options are rows of ``kradar_plugin.runner_options``. Checkpoints are taken in epoch order (``epoch_<N>`` /
``iter_<N>``; names without a number after them, by modification time), each file once. Standard library only.
"""
import glob
import os
import os.path as osp
import re

from ... import runner_options

# SweepRequest's arguments: the options they come from
FIELDS = dict(checkpoints='eval_checkpoints', watch='eval_watch', watch_idle_s='eval_watch_idle',
              watch_poll_s='eval_watch_poll', final_epoch='eval_final_epoch', eval_key='eval_key',
              stop_on_error='eval_stop_on_error')
# the checkpoints a watched directory offers: mmcv's and mmengine's per-epoch / per-iteration files
WATCH_PATTERNS = ('epoch_*.pth', 'iter_*.pth')
_NUMBER = re.compile(r'(?:^|_)(epoch|iter)_(\d+)$')


class SweepRequest(object):
    """What the user asked for: ``checkpoints`` (paths or globs, in the order given), ``watch`` (a
    directory, or a glob of checkpoint files), ``watch_idle_s``, ``watch_poll_s``, ``final_epoch``,
    ``eval_key`` (None: the headline BEV AP of the first class) and ``stop_on_error``."""

    def __init__(self, checkpoints=(), watch=None, watch_idle_s=None, watch_poll_s=None, final_epoch=None,
                 eval_key=None, stop_on_error=False):
        self.checkpoints, self.watch, self.eval_key = list(checkpoints), watch or None, eval_key or None
        self.watch_idle_s = runner_options.check('eval_watch_idle', watch_idle_s)
        self.watch_poll_s = runner_options.check('eval_watch_poll', watch_poll_s)
        self.final_epoch = None if final_epoch in (None, '') else runner_options.check('eval_final_epoch',
                                                                                        final_epoch)
        self.stop_on_error = bool(stop_on_error)
        if self.checkpoints and self.watch:
            raise ValueError('a sweep takes either a list of checkpoints or a directory to watch, not both')

    @property
    def active(self):
        return bool(self.checkpoints or self.watch)

    def as_dict(self):
        return dict((field, getattr(self, field)) for field in FIELDS)

    def __repr__(self):
        return 'SweepRequest({})'.format(', '.join('{}={!r}'.format(k, v) for k, v in sorted(self.as_dict().items())))


def request_from(config=None, environ=None, prefix=''):
    """The :class:`SweepRequest` of a config's sweep keys (a mapping; errors name ``prefix + key``) with the
    environment's overrides."""
    values = runner_options.resolve(config or {}, runner_options.SWEEP, environ, prefix)
    named = runner_options.environment(('eval_checkpoints', 'eval_watch'), environ)
    if 'eval_watch' in named:
        values['eval_checkpoints'] = ()
    elif 'eval_checkpoints' in named:
        values['eval_watch'] = None
    return SweepRequest(**dict((field, values[key]) for field, key in FIELDS.items()))


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

    A checkpoint is due once it is complete -- its size and modification time unchanged since the previous look,
    or last modified at least ``settle_s`` ago (mmcv and mmengine write checkpoints in place) -- and not already
    done with that same size and time (``done(path, state)``, from the sweep record, so a restarted watcher skips
    what it has evaluated). The watch ends after ``idle_s`` seconds without a due checkpoint, or once the
    checkpoint of ``final_epoch`` is done. ``clock`` and ``list_files`` are injectable for tests."""

    def __init__(self, watch, idle_s, final_epoch=None, done=None, clock=None, list_files=None,
                 settle_s=runner_options.OPTION['eval_watch_poll'].default):
        import time
        self.wall_clock = time.time
        self.settle_s = settle_s
        self.watch = watch
        self.idle_s = idle_s
        self.final_epoch = final_epoch
        self.done = done or (lambda path, state: False)
        self.clock = clock or time.time
        self.list_files = list_files or (lambda: watched_files(watch))
        self.seen, self.last_progress, self.final_done = {}, self.clock(), False

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
