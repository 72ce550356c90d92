"""Input checks for the evaluator: a clear ValueError naming frame, field and value, or a documented
repair with ONE warning. Inputs are never modified; the checked data come back concatenated.

The common case (every field a numpy array of the right shape) is checked field by field over all frames
at once: gather, compare lengths, concatenate, then test the concatenated values. Anything unusual
(lists, tensors, scalars, a missing or malformed field) takes the frame-by-frame path, which names the
frame, field and value of the first problem.
"""
import warnings

import numpy as np

from .frames import Frames, frame_of, offsets_of
from .protocols import FAKE_2D_BOX, KRADAR_CLASSES, KRADAR_KEYWORDS


class EvaluationInputWarning(UserWarning):
    """A documented repair or an input that makes the numbers trivial (e.g. no detections)."""


_GEOMETRY = (('location', 3), ('dimensions', 3), ('rotation_y', 0))
_OPTIONAL = (('truncated', 0, 0.0), ('occluded', 0, 0), ('alpha', 0, -10.0), ('bbox', 4, FAKE_2D_BOX))
_NUMERIC = ('truncated', 'occluded', 'alpha', 'bbox', 'location', 'dimensions', 'rotation_y', 'score')
_EMPTY_NAMES = np.zeros(0, dtype='<U1')


def _as_field(frame, key, width, n, side, index, dtype):
    value = frame[key]
    if hasattr(value, 'detach'):  # a torch tensor slipped in: take its values
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise ValueError('{}[{}][{!r}]: cannot be read as {} numbers ({})'.format(
            side, index, key, np.dtype(dtype).name, ' '.join(str(exc).split())[:200]))
    want = (n, width) if width else (n,)
    if arr.shape != want:
        if arr.size == 0 and n == 0:
            return np.zeros(want, dtype=dtype)
        got = arr.shape[0] if arr.ndim else 'a scalar'
        if arr.ndim and arr.shape[0] != n:
            raise ValueError('{}[{}]: field {!r} has {} entries but {!r} has {} (fields of one frame must '
                             'have the same length)'.format(side, index, key, got, 'name', n))
        raise ValueError('{}[{}][{!r}]: expected shape {}, got {}'.format(side, index, key, want, arr.shape))
    return arr


def _filled(default, n):
    """``n`` rows of an optional field's default (a number, or the fake 2D box)."""
    return np.tile(np.asarray(default, dtype=np.float64), (n, 1) if np.ndim(default) else n)


def _fast_side(annos, need_score, repairs, optional):
    """All frames at once when every field of every frame has per-object length and concatenates to
    the right shape; None otherwise (the frame-by-frame path then finds and names the problem, or
    handles the unusual input)."""
    n_frames = len(annos)
    if n_frames == 0:
        return None
    try:
        names = [a['name'] for a in annos]   # a plain string (0-d) makes np.concatenate fail: slow path
        counts = np.fromiter(map(len, names), dtype=np.int64, count=n_frames)
        full = np.flatnonzero(counts)
        total = int(counts.sum())

        def gather(values):
            if not np.array_equal(np.fromiter(map(len, values), dtype=np.int64, count=n_frames), counts):
                return None
            if len(full) < n_frames:
                values = [values[i] for i in full]
            return np.concatenate(values) if len(values) else None

        name_arr = gather(names)
        name_arr = _EMPTY_NAMES if name_arr is None and total == 0 else name_arr
        if name_arr is None or name_arr.shape != (total,):
            return None
        data = {'name': name_arr.astype(str)}
        columns = [(key, width, None) for key, width in _GEOMETRY + ((('score', 0),) if need_score else ())]
        for key, width, default in optional:
            try:
                columns.append((key, width, [a[key] for a in annos]))
            except KeyError:
                if any(key in a for a in annos):
                    return None
                repairs.add(key)
                data[key] = _filled(default, total)
        for key, width, values in columns:
            values = [a[key] for a in annos] if values is None else values
            want = (total, width) if width else (total,)
            arr = gather(values)
            if arr is None:
                if total:
                    return None
                arr = np.zeros(want)
            arr = np.asarray(arr, dtype=np.float64)
            if arr.shape != want:
                return None
            data[key] = arr
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None
    return data, offsets_of(counts)


def _check_side(annos, side, need_score, repairs, optional=_OPTIONAL):
    fast_repairs = set()
    fast = _fast_side(annos, need_score, fast_repairs, optional)
    if fast is not None:
        repairs.update('{}.{}'.format(side, k) for k in fast_repairs)
        data, offsets = fast
        return _check_values(data, offsets, side)
    n_frames = len(annos)
    fields = dict((k, []) for k in ('name',) + _NUMERIC)
    counts = np.zeros(n_frames, dtype=np.int64)
    for index in range(n_frames):
        frame = annos[index]
        if not hasattr(frame, 'keys'):
            raise ValueError('{}[{}]: expected a dict of per-object arrays, got {}'.format(
                side, index, type(frame).__name__))
        required = ['name', 'location', 'dimensions', 'rotation_y'] + (['score'] if need_score else [])
        missing = [k for k in required if k not in frame]
        if missing:
            raise ValueError('{}[{}]: missing field(s) {} (have {})'.format(
                side, index, missing, sorted(frame.keys())))
        names = frame['name']
        names = np.asarray(names).reshape(-1) if np.size(names) else _EMPTY_NAMES
        n = len(names)
        counts[index] = n
        fields['name'].append(names.astype(str))
        for key, width in _GEOMETRY:
            fields[key].append(_as_field(frame, key, width, n, side, index, np.float64))
        if need_score:
            fields['score'].append(_as_field(frame, 'score', 0, n, side, index, np.float64))
        for key, width, default in optional:
            if key not in frame:
                repairs.add('{}.{}'.format(side, key))
            fields[key].append(_as_field(frame, key, width, n, side, index, np.float64) if key in frame
                               else _filled(default, n))
    data = dict((key, np.concatenate(parts, axis=0)) for key, parts in fields.items() if parts)
    if n_frames == 0:
        data = {'name': _EMPTY_NAMES, 'location': np.zeros((0, 3)), 'dimensions': np.zeros((0, 3)),
                'rotation_y': np.zeros(0), 'truncated': np.zeros(0), 'occluded': np.zeros(0),
                'alpha': np.zeros(0), 'bbox': np.zeros((0, 4)), 'score': np.zeros(0)}
    return _check_values(data, offsets_of(counts), side)


def _check_values(data, offsets, side):
    for key in _NUMERIC:
        if key not in data:
            continue
        arr = data[key]
        bad = ~np.isfinite(arr)
        if bad.any():
            row = int(np.nonzero(bad.reshape(len(arr), -1).any(axis=1))[0][0])
            f = frame_of(offsets, row)
            raise ValueError('{}[{}][{!r}][{}] = {!r} is not finite'.format(
                side, f, key, row - offsets[f], arr[row].tolist()))
    neg = data['dimensions'] < 0
    if neg.any():
        row = int(np.nonzero(neg.any(axis=1))[0][0])
        f = frame_of(offsets, row)
        raise ValueError('{}[{}][\'dimensions\'][{}] = {!r} has a negative size'.format(
            side, f, row - offsets[f], data['dimensions'][row].tolist()))
    return data, offsets


class CheckedSide(object):
    """One side (GT or detections) checked and concatenated, e.g. in a worker process that read its
    pickle; :func:`check_frames` takes it in place of the list of frames.

    ``fields``: the optional fields it checked; ``repairs``: those it filled with defaults, as
    'gt_annos.bbox'."""

    def __init__(self, side, n_frames, data, offsets, fields, repairs):
        self.side = side
        self.n_frames = n_frames
        self.data = data
        self.offsets = offsets
        self.fields = frozenset(fields)
        self.repairs = frozenset(repairs)

    def __len__(self):
        return self.n_frames


def _optional(fields):
    return tuple(f for f in _OPTIONAL if fields is None or f[0] in fields)


def check_side(annos, side, optional=None):
    """Check and concatenate one side's list of per-frame dicts: a :class:`CheckedSide`. ``side`` is
    'gt_annos' or 'dt_annos' (detections must have a score); ``optional`` as in :func:`check_frames`."""
    if side not in ('gt_annos', 'dt_annos'):
        raise ValueError("side must be 'gt_annos' or 'dt_annos', got {!r}".format(side))
    _check_list(annos, side)
    optional = _optional(optional)
    repairs = set()
    data, offsets = _check_side(annos, side, side == 'dt_annos', repairs, optional)
    return CheckedSide(side, len(annos), data, offsets, [f[0] for f in optional], repairs)


def check_columns(side, data, offsets, optional=None):
    """A :class:`CheckedSide` of columns concatenated over frames that already hold every field (converted
    from infos or results, say): the value checks of :func:`check_side`, nothing to repair. ``optional``:
    the optional fields the evaluation reads (default all), the only ones checked and kept."""
    fields = [f[0] for f in _optional(optional)]
    required = tuple(k for k, _ in _GEOMETRY) + (('score',) if side == 'dt_annos' else ())
    data = dict((k, v) for k, v in data.items() if k not in _NUMERIC or k in fields or k in required)
    data['name'] = np.asarray(data['name']).astype(str)
    for key in _NUMERIC:
        if key in data:
            data[key] = np.asarray(data[key], dtype=np.float64)
    missing = [k for k in required + tuple(fields) if k not in data]
    if missing:
        raise ValueError('{}: columns without {}'.format(side, missing))
    data, offsets = _check_values(data, np.asarray(offsets, dtype=np.int64), side)
    return CheckedSide(side, len(offsets) - 1, data, offsets, fields, ())


def in_region(side, pcd_limit_range, azimuth_range=None):
    """A :class:`CheckedSide` keeping the objects whose centre lies strictly inside a benchmark's region
    ``(x_min, y_min, z_min, x_max, y_max, z_max)`` (K-Radar's label filter and EchoFusion's compare with ``>``
    and ``<``), in K-Radar's frame (x, y, z) = (location[2], location[0], location[1]) of the evaluator
    layout, and, with ``azimuth_range`` (degrees), strictly inside it."""
    loc = side.data['location']
    lo = np.asarray(pcd_limit_range[:3], dtype=np.float64)
    hi = np.asarray(pcd_limit_range[3:], dtype=np.float64)
    xyz = loc[:, [2, 0, 1]]
    keep = np.all((xyz > lo) & (xyz < hi), axis=1)
    if azimuth_range is not None:
        az = np.degrees(np.arctan2(xyz[:, 1], xyz[:, 0]))
        keep &= (az > float(azimuth_range[0])) & (az < float(azimuth_range[1]))
    owner = np.repeat(np.arange(side.n_frames, dtype=np.int64), np.diff(side.offsets))
    offsets = offsets_of(np.bincount(owner[keep], minlength=side.n_frames))
    data = dict((key, value[keep]) for key, value in side.data.items())
    return check_columns(side.side, data, offsets, side.fields)


def _check_list(annos, side):
    try:
        sized = not isinstance(annos, dict) and hasattr(annos, '__getitem__') and len(annos) >= 0
    except TypeError:        # a 0-d array has __len__ but no length
        sized = False
    if not sized:
        raise ValueError('{}: expected a list with one dict per frame, got {}'.format(side, type(annos).__name__))


def _checked(annos, side, optional):
    if not isinstance(annos, CheckedSide):
        return check_side(annos, side, optional)
    wanted = set(f[0] for f in _optional(optional))
    if annos.side != side or not wanted <= annos.fields:
        raise ValueError('{}: a CheckedSide of {} with fields {} cannot stand for {} needing {}'.format(
            side, annos.side, sorted(annos.fields), side, sorted(wanted)))
    return annos


def check_frames(gt_annos, dt_annos, optional=None):
    """Check both lists of per-frame dicts (or :class:`CheckedSide` results of :func:`check_side`) and
    return :class:`Frames`; warns once for repairs.

    ``optional``: the optional fields the evaluation reads (default all of 'truncated', 'occluded',
    'alpha', 'bbox'); the others are neither read nor checked."""
    for side, annos in (('gt_annos', gt_annos), ('dt_annos', dt_annos)):
        if not isinstance(annos, CheckedSide):
            _check_list(annos, side)
    if len(gt_annos) != len(dt_annos):
        raise ValueError('gt_annos has {} frames but dt_annos has {}: the lists must be aligned frame by '
                         'frame (different counts usually mean duplicated or truncated distributed '
                         'results)'.format(len(gt_annos), len(dt_annos)))
    gt_side = _checked(gt_annos, 'gt_annos', optional)
    dt_side = _checked(dt_annos, 'dt_annos', optional)
    gt, dt = gt_side.data, dt_side.data
    repairs = gt_side.repairs | dt_side.repairs
    notes = []
    if repairs:
        notes.append('missing optional field(s) {} filled with defaults (truncated 0, occluded 0, '
                     'alpha -10, bbox {})'.format(sorted(repairs), list(FAKE_2D_BOX)))
    if gt_side.n_frames == 0:
        notes.append('no frames to evaluate: every AP is 0')
    elif len(dt['name']) == 0:
        notes.append('no detections in any of the {} frames: every AP is 0'.format(gt_side.n_frames))
    if notes:
        warnings.warn('kradar_eval: ' + '; '.join(notes), EvaluationInputWarning, stacklevel=3)
    return Frames(gt_side.n_frames, dict(gt), dict(dt), gt_side.offsets, dt_side.offsets)


def resolve_classes(current_classes):
    """Class names to evaluate: names (case-insensitive) or K-Radar indices; unknown ones are dropped
    with one warning listing them; none left is a ValueError."""
    if isinstance(current_classes, (str, int, np.integer)):
        current_classes = [current_classes]
    lower = dict((c.lower(), c) for c in KRADAR_CLASSES)
    lower.update((k, c) for k, c in zip(KRADAR_KEYWORDS, KRADAR_CLASSES))     # K-Radar's 'sed', 'bus', ...
    known, unknown = [], []
    for cls in current_classes:
        if isinstance(cls, (int, np.integer)) and not isinstance(cls, bool):
            if 0 <= int(cls) < len(KRADAR_CLASSES):
                known.append(KRADAR_CLASSES[int(cls)])
            else:
                unknown.append(cls)
        elif isinstance(cls, str) and cls.lower() in lower:
            known.append(lower[cls.lower()])
        else:
            unknown.append(cls)
    if unknown:
        warnings.warn('kradar_eval: unknown class name(s) {} ignored; K-Radar classes are {}'.format(
            unknown, list(KRADAR_CLASSES)), EvaluationInputWarning, stacklevel=3)
    if not known:
        raise ValueError('current_classes={!r}: no K-Radar class to evaluate (known: {})'.format(
            list(current_classes), list(KRADAR_CLASSES)))
    return tuple(sorted(set(known), key=known.index))   # each once, in the order given


#: what a dataset's evaluation in a run scores (both adapters' default; an offline command repeats it): 2D, BEV, 3D
DATASET_EVAL_TYPES = ('bbox', 'bev', '3d')


def check_eval_types(eval_types):
    """Normalise ``eval_types`` (never mutates the argument): a tuple from 'bbox', 'bev', '3d', 'aos'
    (None: EchoFusion's default, bev and 3d). 'aos' without 'bbox' is an error, as EchoFusion asserts."""
    if eval_types is None:
        eval_types = ('bev', '3d')
    if isinstance(eval_types, str):
        eval_types = (eval_types,)
    eval_types = tuple(eval_types)
    bad = [t for t in eval_types if t not in ('bbox', 'bev', '3d', 'aos')]
    if bad or not [t for t in eval_types if t != 'aos']:
        raise ValueError('eval_types={!r}: choose one or more of bbox, bev, 3d (aos needs bbox)'.format(
            list(eval_types)))
    if 'aos' in eval_types and 'bbox' not in eval_types:
        raise ValueError('eval_types={!r}: aos needs bbox (AOS is computed on the 2D matching)'.format(
            list(eval_types)))
    return eval_types
