"""The checked frames of both sides: :class:`Frames` (columns concatenated over frames with offsets, class
names as small integer codes) and the offset helpers every input path uses."""
import numpy as np

from .protocols import KRADAR_CLASSES, KRADAR_KEYWORDS


class Frames(object):
    """Checked annotations of both sides, concatenated over frames with offsets ``gt_off``/``dt_off``.

    ``names`` holds the distinct class names of both sides and ``gt['code']`` / ``dt['code']`` each
    object's index into it (class tests compare small integers, not strings)."""

    def __init__(self, n_frames, gt, dt, gt_off, dt_off):
        self.n_frames = n_frames
        self.gt = gt
        self.dt = dt
        self.gt_off = gt_off
        self.dt_off = dt_off
        codes, self.names = name_codes(np.concatenate([gt['name'], dt['name']]))
        gt['code'] = codes[:len(gt['name'])]
        dt['code'] = codes[len(gt['name']):]

    def codes_of(self, name, case_sensitive=False):
        """Codes of the names equal to ``name`` (case-insensitively unless asked otherwise; then K-Radar's
        text-file keyword of a class, e.g. 'sed' for 'Sedan', counts as its name)."""
        if case_sensitive:
            return [c for c, n in enumerate(self.names) if n == name]
        spellings = (name.lower(), _OTHER_SPELLING.get(name.lower()))
        return [c for c, n in enumerate(self.names) if n.lower() in spellings]


#: a class's other lower-case spelling: its K-Radar keyword, or a keyword's full name
_OTHER_SPELLING = dict([(c.lower(), k) for c, k in zip(KRADAR_CLASSES, KRADAR_KEYWORDS)] +
                       [(k, c.lower()) for c, k in zip(KRADAR_CLASSES, KRADAR_KEYWORDS)])


def name_codes(names, max_scan=32):
    """(int64 codes, tuple of distinct names) of a string array; a few equality scans (a data set has a
    handful of class names), np.unique beyond ``max_scan`` distinct names."""
    codes = np.full(len(names), -1, dtype=np.int64)
    distinct = []
    start = 0
    while len(distinct) < max_scan:
        todo = np.flatnonzero(codes[start:] == -1)
        if len(todo) == 0:
            return codes, tuple(distinct)
        start += int(todo[0])
        codes[names == names[start]] = len(distinct)
        distinct.append(str(names[start]))
    uniq, inverse = np.unique(names, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), tuple(str(n) for n in uniq)


def offsets_of(counts):
    """(F + 1,) int64 frame offsets of per-frame row counts: frame ``f`` is rows ``offsets[f]:offsets[f+1]``."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def frame_of(offsets, row):
    """The frame that owns ``row`` of columns concatenated with frame ``offsets``."""
    return int(np.searchsorted(offsets, row, side='right') - 1)
