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
"""
import collections
import os
import re

import numpy as np

from .errors import KRadarFileError
from .text import lines_of, read_text

NAME = re.compile(r'^\d{6}\.txt$')
FIELDS = ('name', 'truncated', 'occluded', 'alpha', 'x1', 'y1', 'x2', 'y2', 'h', 'w', 'l', 'y', 'z', 'x', 'yaw',
          'score')
#: the layouts' folder names: (predictions, GT, descriptions)
LAYOUTS = (('pred', 'gt', 'desc'), ('preds', 'gts', 'desc'))

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
            if os.path.isfile(os.path.join(base, 'val.txt')) and all(
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
    """The frame ids of a ``val.txt`` (one integer a line), in order; duplicates are errors."""
    ids, seen = [], {}
    for number, line in enumerate(lines_of(path, 'frame list'), 1):
        text = line.strip()
        if not text:
            continue
        if not text.isdigit():
            raise KRadarFileError(path, 'expected a frame number', line=number, field='id', value=text)
        value = int(text)
        if value in seen:
            raise KRadarFileError(path, 'frame {} listed twice (first on line {})'.format(value, seen[value]),
                                  line=number, field='id', value=text)
        seen[value] = number
        ids.append(value)
    return ids


def read_folder(path):
    """The :class:`KittiFolder` of ``path`` (see :func:`find_folder`)."""
    base, (pred_name, gt_name, desc_name) = find_folder(path)
    val = os.path.join(base, 'val.txt')
    ids = read_ids(val)
    pred_dir, gt_dir, desc_dir = (os.path.join(base, n) for n in (pred_name, gt_name, desc_name))
    pred_ids = sorted(int(n[:6]) for n in os.listdir(pred_dir) if NAME.match(n))
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
    gt = read_side([os.path.join(gt_dir, '{:06d}.txt'.format(i)) for i in ids], 'GT')
    dt = read_side([os.path.join(pred_dir, '{:06d}.txt'.format(i)) for i in ids], 'prediction')
    conditions = [read_desc(os.path.join(desc_dir, '{:06d}.txt'.format(i))) for i in ids]
    return KittiFolder(base, ids, gt, dt, conditions, pred_dir, gt_dir)


def read_desc(path):
    """A ``desc/NNNNNN.txt`` (capture_time, road_type, climate) as an evaluator condition row."""
    lines = [line.strip() for line in lines_of(path, 'description file')]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) != 3 or not all(lines):
        raise KRadarFileError(path, 'expected three lines: capture_time, road_type, climate', field='lines',
                              value=len(lines))
    return {'capture_time': lines[0], 'road_type': lines[1], 'climate': lines[2]}


def read_side(paths, what):
    """Columns ({field: array}, 'offsets') of K-Radar text files, parsed as ``kitti_common.get_label_anno``."""
    names, numbers, counts, scored = [], [], [], []
    for path in paths:
        rows = [line.split() for line in read_text(path, '{} file'.format(what)).splitlines()]
        rows = [r for r in rows if r]
        width = len(rows[0]) if rows else 15
        for number, row in enumerate(rows, 1):
            if len(row) not in (15, 16) or len(row) < width:
                raise KRadarFileError(path, 'a KITTI line has 15 fields ({}) and a score{}, this one {}'.format(
                    ' '.join(FIELDS[:15]), '' if width == 15 else ' (as the first line has)', len(row)),
                    line=number)
            names.append(row[0])
            numbers.append(row[1:15] + ([row[15]] if width == 16 else ['0']))
        counts.append(len(rows))
        scored.append(width == 16)
    try:
        values = np.array(numbers, dtype=np.float64).reshape(-1, 15)
    except ValueError:
        _name_bad_value(paths, numbers, counts)
        raise
    bad = ~np.isfinite(values)
    if bad.any():
        row, col = [int(v[0]) for v in np.nonzero(bad)]
        _raise_at(paths, counts, row, col, numbers[row][col], 'expected a finite number')
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    hwl = values[:, 7:10]
    data = {'name': np.array(names, dtype=str).reshape(-1), 'truncated': values[:, 0].copy(),
            'occluded': values[:, 1].copy(), 'alpha': values[:, 2].copy(), 'bbox': values[:, 3:7].copy(),
            'dimensions': hwl[:, [2, 0, 1]].copy(), 'location': values[:, 10:13].copy(),
            'rotation_y': values[:, 13].copy(), 'score': values[:, 14].copy()}
    return data, offsets


def _name_bad_value(paths, numbers, counts):
    row = 0
    for values in numbers:
        for col, text in enumerate(values):
            try:
                float(text)
            except ValueError:
                _raise_at(paths, counts, row, col, text, 'expected a number')
        row += 1


def _raise_at(paths, counts, row, col, text, problem):
    frame = int(np.searchsorted(np.cumsum(counts), row, side='right'))
    line = row - int(sum(counts[:frame])) + 1
    raise KRadarFileError(paths[frame], problem, line=line, field=FIELDS[col + 1], value=text)


def frame_annos(data, offsets):
    """Per-frame annotation dicts (K-Radar's ``get_label_annos`` list) of columns."""
    out = []
    for f in range(len(offsets) - 1):
        a, b = int(offsets[f]), int(offsets[f + 1])
        out.append(dict((k, v[a:b]) for k, v in data.items()))
    return out
