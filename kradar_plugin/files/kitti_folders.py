"""K-Radar's own prediction folders (``pipelines/pipeline_detection_v1_0.py``), read for the evaluator.

Two layouts, one confidence-threshold folder ``<conf>`` each:

- ``validate_kitti``: ``<conf>/{pred,gt,desc}/NNNNNN.txt`` and ``<conf>/val.txt``;
- ``validate_kitti_conditional``: ``<conf>/{all,<road>,<time>,<weather>}/{preds,gts,desc}/`` with a
  ``val.txt`` in each; ``all`` holds every frame, the others copies of its subsets, so ``all`` is read and the
  groups come from ``desc/``.

A line is ``name trunc occ alpha x1 y1 x2 y2 h w l y z x yaw [score]`` (radar frame, camera-like order);
parsed as K-Radar's ``kitti_common.get_label_anno`` parses it (the same arrays: ``dimensions`` (l, h, w),
``location`` as written, ``score`` zeros when the file's first line has 15 fields). Frames are paired by file
name (K-Radar pairs them by order); a prediction without GT, or GT without prediction, is an error naming
both. ``desc/NNNNNN.txt`` holds capture_time, road_type, climate, one a line.

Folders come from others: only ``NNNNNN.txt`` regular files (links followed) may stand in ``pred/``, ``gt/`` and
``desc/``; anything else there is refused by name, never skipped. Files are read by :mod:`.text` (no FIFO blocks, no
device is read); the work is bounded by :data:`MAX_OBJECTS` objects per file and :data:`MAX_PAIRS` GT x prediction
pairs in all; an error names the file (and line) of the frame.
"""
import collections
import os
import re

import numpy as np

from .errors import KRadarFileError, checked_int, quote
from .text import lines_of, read_text

NAME = re.compile(r'^\d{6}\.txt$')
FIELDS = ('name', 'truncated', 'occluded', 'alpha', 'x1', 'y1', 'x2', 'y2', 'h', 'w', 'l', 'y', 'z', 'x', 'yaw',
          'score')
#: the layouts' folder names: (predictions, GT, descriptions)
LAYOUTS = (('pred', 'gt', 'desc'), ('preds', 'gts', 'desc'))
#: objects (lines) one GT or prediction file may hold: K-Radar's frames hold tens of objects, and its pipeline
#: writes the detections above a confidence threshold after NMS (at most a few hundred)
MAX_OBJECTS = 1000
#: GT x prediction pairs of all frames together: the evaluation keeps an overlap and its bookkeeping per pair
#: (about 120 bytes: 10 million pairs take about 1.2 GB); K-Radar's 17,535 test frames give about a million
#: at a confidence threshold of 0.3 and several million at 0.0
MAX_PAIRS = 10 ** 7
#: characters of a class keyword (K-Radar writes sed, bus, mot, bic, big, ped, peg and dummy)
MAX_NAME = 64
#: the listing and reading progress is reported every this many frames
PROGRESS_STEP = 500

KittiFolder = collections.namedtuple('KittiFolder', 'path ids gt dt conditions pred_dir gt_dir')
KittiFolder.__doc__ = ("One confidence folder read: ``ids`` (int, val.txt order), ``gt`` / ``dt`` columns "
                       "({field: array concatenated over frames}, ``offsets``), ``conditions`` one row per frame.")


def find_folder(path):
    """(folder holding val.txt, (pred, gt, desc) names) of ``path``: a ``<conf>`` folder of either layout or
    the conditional layout's ``all`` folder, or an epoch folder holding one ``<conf>`` folder. Several
    ``<conf>`` folders inside ``path`` are an error naming them (give one)."""
    if not os.path.isdir(path):
        raise KRadarFileError(path, 'no such prediction folder' if not os.path.exists(path) else
                              'not a folder (give the <conf> folder of K-Radar\'s test_kitti/<epoch> output)')
    for base in (path, os.path.join(path, 'all')):
        for names in LAYOUTS:
            # any val.txt counts (a FIFO or a link to a device too): reading it refuses what is not a file
            if os.path.lexists(os.path.join(base, 'val.txt')) and all(
                    os.path.isdir(os.path.join(base, n)) for n in names[:2]):
                return base, names
    confs = sorted(n for n in os.listdir(path) if _is_number(n) and os.path.isdir(os.path.join(path, n)))
    if len(confs) == 1:      # an epoch folder with one threshold: that one
        return find_folder(os.path.join(path, confs[0]))
    if confs:
        raise KRadarFileError(path, 'holds the folders of {} confidence thresholds ({}): give one, e.g. {}'.format(
            len(confs), ', '.join(confs), os.path.join(path, confs[0])))
    raise KRadarFileError(path, "not a K-Radar prediction folder: expected val.txt with pred/ gt/ desc/ "
                                "(validate_kitti) or all/val.txt with preds/ gts/ desc/ (validate_kitti_conditional)")


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def read_ids(path):
    """The frame ids of a ``val.txt`` (one integer of at most six digits a line, as K-Radar names its
    files), in order; duplicates are errors."""
    ids, seen = [], {}
    for number, line in enumerate(lines_of(path, 'frame list'), 1):
        text = line.strip()
        if not text:
            continue
        if not text.isdigit():
            raise KRadarFileError(path, 'expected a frame number', line=number, field='id', value=text)
        value = checked_int(text, path, number, 'id', digits=9)
        if value > 999999:
            raise KRadarFileError(path, "expected a frame number of six digits (K-Radar's files are NNNNNN.txt)",
                                  line=number, field='id', value=text)
        if value in seen:
            raise KRadarFileError(path, 'frame {} listed twice (first on line {})'.format(value, seen[value]),
                                  line=number, field='id', value=text)
        seen[value] = number
        ids.append(value)
    return ids


def frame_files(folder, what):
    """The sorted frame ids of the ``NNNNNN.txt`` regular files (links followed) in ``folder``; any other
    entry is a :class:`KRadarFileError` listing them by name."""
    ids, odd = [], []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    regular = entry.is_file()        # follows a link: its target must be a regular file
                except OSError:
                    regular = False
                if regular and NAME.match(entry.name):
                    ids.append(int(entry.name[:6]))
                else:
                    odd.append(entry.name)
    except OSError as exc:
        raise KRadarFileError(folder, 'cannot list the {} folder ({})'.format(what, exc.strerror or exc))
    if odd:
        odd.sort()
        raise KRadarFileError(folder, '{} entr{} of the {} folder {} not a K-Radar frame file (a regular file '
                              'NNNNNN.txt): {}{}; move {} away'.format(
                                  len(odd), 'y' if len(odd) == 1 else 'ies', what,
                                  'is' if len(odd) == 1 else 'are', ', '.join(quote(n) for n in odd[:5]),
                                  ', ...' if len(odd) > 5 else '', 'it' if len(odd) == 1 else 'them'))
    ids.sort()
    return ids


def read_folder(path, progress=None):
    """The :class:`KittiFolder` of ``path`` (see :func:`find_folder`); ``progress(n_frames)`` may return a
    bar (``start(total, label)``, ``update(n)``, ``close()``) or None."""
    base, (pred_name, gt_name, desc_name) = find_folder(path)
    val = os.path.join(base, 'val.txt')
    ids = read_ids(val)
    pred_dir, gt_dir, desc_dir = (os.path.join(base, n) for n in (pred_name, gt_name, desc_name))
    pred_ids = frame_files(pred_dir, 'prediction')
    gt_ids = frame_files(gt_dir, 'GT')
    desc_ids = frame_files(desc_dir, 'description') if os.path.isdir(desc_dir) else []
    listed = set(ids)
    extra = [i for i in pred_ids if i not in listed]
    if extra:
        raise KRadarFileError(os.path.join(pred_dir, '{:06d}.txt'.format(extra[0])),
                              'prediction without GT: frame {} is not in {} ({} such frame(s))'.format(
                                  extra[0], val, len(extra)))
    have = set(pred_ids)
    missing = [i for i in ids if i not in have]
    if missing:
        raise KRadarFileError(os.path.join(gt_dir, '{:06d}.txt'.format(missing[0])),
                              'GT without prediction: {} is missing ({} such frame(s))'.format(
                                  os.path.join(pred_dir, '{:06d}.txt'.format(missing[0])), len(missing)))
    for folder, found, what in ((gt_dir, gt_ids, 'GT file'), (desc_dir, desc_ids, 'description')):
        unlisted = [i for i in found if i not in listed]
        if unlisted:
            raise KRadarFileError(os.path.join(folder, '{:06d}.txt'.format(unlisted[0])),
                                  '{} of a frame that {} does not list ({} such file(s)): remove them or list '
                                  'them'.format(what, val, len(unlisted)))
    bar = progress(len(ids)) if progress is not None else None
    if bar is not None:
        bar.start(len(ids), 'reading {}'.format(os.path.basename(os.path.normpath(path))))
    gt = _Side('GT')
    dt = _Side('prediction')
    conditions = []
    pairs = 0
    for k, i in enumerate(ids):
        name = '{:06d}.txt'.format(i)
        n_gt = gt.add(os.path.join(gt_dir, name))
        n_dt = dt.add(os.path.join(pred_dir, name))
        pairs += n_gt * n_dt
        if pairs > MAX_PAIRS:
            raise KRadarFileError(os.path.join(pred_dir, name), 'frame {} ({} GT, {} predictions) brings the GT x '
                                  'prediction pairs of the {} frames read so far to {:,}, more than the {:,} the '
                                  'evaluation holds in memory (kitti_folders.MAX_PAIRS)'.format(
                                      i, n_gt, n_dt, k + 1, pairs, MAX_PAIRS))
        conditions.append(read_desc(os.path.join(desc_dir, name)))
        if bar is not None and (k + 1) % PROGRESS_STEP == 0:
            bar.update(PROGRESS_STEP)
    if bar is not None:
        bar.update(len(ids) % PROGRESS_STEP)
        bar.close()
    return KittiFolder(base, ids, gt.columns(), dt.columns(), conditions, pred_dir, gt_dir)


def read_desc(path):
    """A ``desc/NNNNNN.txt`` (capture_time, road_type, climate) as an evaluator condition row."""
    lines = [line.strip() for line in lines_of(path, 'description file')]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) != 3 or not all(lines):
        raise KRadarFileError(path, 'expected three lines: capture_time, road_type, climate', field='lines',
                              value=len(lines))
    return {'capture_time': lines[0], 'road_type': lines[1], 'climate': lines[2]}


class _Side(object):
    """One side's files read frame by frame into float arrays (a file's strings live only while it is read)."""

    def __init__(self, what):
        self.what = what
        self.names, self.values, self.counts = [], [], []

    def add(self, path):
        """Read one frame's file; returns its number of objects."""
        names, values = read_objects(path, self.what)
        self.names.extend(names)
        self.values.append(values)
        self.counts.append(len(names))
        return len(names)

    def columns(self):
        values = np.concatenate(self.values) if self.values else np.zeros((0, 15))
        offsets = np.zeros(len(self.counts) + 1, dtype=np.int64)
        np.cumsum(self.counts, out=offsets[1:])
        hwl = values[:, 7:10]
        data = {'name': np.array(self.names, dtype=str).reshape(-1), 'truncated': values[:, 0].copy(),
                'occluded': values[:, 1].copy(), 'alpha': values[:, 2].copy(), 'bbox': values[:, 3:7].copy(),
                'dimensions': hwl[:, [2, 0, 1]].copy(), 'location': values[:, 10:13].copy(),
                'rotation_y': values[:, 13].copy(), 'score': values[:, 14].copy()}
        return data, offsets


def read_objects(path, what):
    """(names, (N, 15) float64: the 14 numbers and the score, 0 without one) of one GT or prediction file;
    a line K-Radar's parser cannot read, or one the evaluation cannot score (a non-finite number, a negative
    size), is a :class:`KRadarFileError` naming ``path``:line, the field and the value."""
    rows = []
    for number, line in enumerate(read_text(path, '{} file'.format(what)).splitlines(), 1):
        parts = line.split(None, 16)        # at most 17 parts, however many spaces the line holds
        if not parts:
            continue
        if len(rows) == MAX_OBJECTS:
            raise KRadarFileError(path, 'more than {} objects in one frame (K-Radar\'s frames hold tens): refused '
                                  'to bound the evaluation (kitti_folders.MAX_OBJECTS)'.format(MAX_OBJECTS),
                                  line=number)
        rows.append((number, parts))
    width = len(rows[0][1]) if rows else 15
    names, numbers = [], []
    for number, row in rows:
        if len(row) not in (15, 16) or len(row) < width:
            raise KRadarFileError(path, 'a KITTI line has 15 fields ({}) and a score{}, this one {}'.format(
                ' '.join(FIELDS[:15]), '' if width == 15 else ' (as the first line has)',
                len(row) if len(row) < 17 else 'more'), line=number)
        if len(row[0]) > MAX_NAME:
            raise KRadarFileError(path, 'expected a class keyword (sed, bus, ...)', line=number, field='name',
                                  value=row[0])
        names.append(row[0])
        numbers.append(row[1:15] + ([row[15]] if width == 16 else ['0']))
    try:
        values = np.array(numbers, dtype=np.float64).reshape(-1, 15)
    except ValueError:
        values = None
    bad = _first_bad(values, numbers)
    if bad is not None:
        r, c, problem = bad
        raise KRadarFileError(path, problem, line=rows[r][0], field=FIELDS[c + 1], value=numbers[r][c])
    return names, values


def _first_bad(values, numbers):
    """(row, column, problem) of the first value that is not a number, not finite, or a negative size
    (h, w, l), or None."""
    if values is None:
        for r, row in enumerate(numbers):
            for c, text in enumerate(row):
                try:
                    float(text)
                except ValueError:
                    return r, c, 'expected a number'
        return 0, 0, 'expected numbers'     # numpy refused what float() reads: name the first line
    bad = ~np.isfinite(values)
    bad[:, 7:10] |= values[:, 7:10] < 0
    if not bad.any():
        return None
    r, c = [int(v[0]) for v in np.nonzero(bad)]
    return r, c, 'expected a finite number' if not np.isfinite(values[r, c]) else 'expected a size of at least 0'
