"""Progress bars of the command-line tools (kradar-eval, kradar-create-data and its audit): tqdm when installed,
else a one-line text bar.

mmcv's ``ProgressBar`` is not used: importing mmcv imports torch, seconds the CLI does not spend.
"""
import sys
import time

#: the CLI shows a bar for sets larger than this many frames
MIN_FRAMES = 5000


class TextBar(object):
    """``start(total, label)`` / ``update(n)`` / ``close()`` drawing ``label [#####.....] k/n 1.2s`` on a
    stream (redrawn in place on a terminal, printed once at the end otherwise)."""

    def __init__(self, stream=None, width=30):
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = hasattr(self.stream, 'isatty') and self.stream.isatty()
        self.total = 0
        self.done = 0
        self.label = ''
        self.t0 = time.time()

    def start(self, total, label):
        self.total, self.done, self.label, self.t0 = max(int(total), 1), 0, label, time.time()
        self._draw()

    def update(self, n=1):
        self.done = min(self.total, self.done + n)
        self._draw()

    def close(self):
        if self.tty:
            self.stream.write('\n')
        else:
            self._draw(force=True)
        self.stream.flush()

    def _line(self):
        filled = int(round(self.width * self.done / float(self.total)))
        return '{} [{}{}] {}/{} {:.1f}s'.format(self.label, '#' * filled, '.' * (self.width - filled), self.done,
                                               self.total, time.time() - self.t0)

    def _draw(self, force=False):
        if self.tty:
            self.stream.write('\r' + self._line())
            self.stream.flush()
        elif force:
            self.stream.write(self._line() + '\n')


class TqdmBar(object):
    """The same interface on tqdm."""

    def __init__(self, tqdm, stream=None):
        self.tqdm = tqdm
        self.stream = stream or sys.stderr
        self.bar = None

    def start(self, total, label):
        self.bar = self.tqdm(total=total, desc=label, file=self.stream, leave=True)

    def update(self, n=1):
        self.bar.update(n)

    def close(self):
        self.bar.close()


def make_bar(n_frames, enabled=True, stream=None):
    """A progress bar for an evaluation of ``n_frames`` frames, or None (small set, or disabled)."""
    if not enabled or n_frames <= MIN_FRAMES:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return TextBar(stream)
    return TqdmBar(tqdm, stream)
