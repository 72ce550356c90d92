"""Model results -> plain numpy, saved to a pickle that loads without torch or mmdet3d.

Two steps on purpose: ``results_to_numpy`` never raises on unexpected content (it only converts tensors and
box objects it recognises), so the raw results can be written to disk before anything is validated;
``normalize_results`` then checks every frame (``result_arrays``, the one validation of a frame's result;
``gather_results`` applies the same checks to all frames at once for ``kradar_columns``) and gives the
evaluator one layout:
``{'boxes_3d': (N, 7+) float64 (x, y, z, dx, dy, dz, yaw, ...), 'scores_3d': (N,), 'labels_3d': (N,)}``.
Accepted per-frame inputs: ``{'pts_bbox': {...}}`` (mmdet3d/EchoFusion) or ``{'boxes_3d', 'scores_3d',
'labels_3d'}``, where ``boxes_3d`` is a ``LiDARInstance3DBoxes`` (anything with a ``.tensor``), a torch
tensor or an array of shape (N, 7+).
"""
import os
import os.path as osp
import time

import numpy as np

from kradar_plugin.evaluation.frames import frame_of, offsets_of

RESULT_KEYS = ('boxes_3d', 'scores_3d', 'labels_3d')


def leaf_to_numpy(obj):
    """A torch tensor or box object (anything with ``.tensor``) as a numpy array; anything else as it is."""
    tensor = getattr(obj, 'tensor', None)  # mmdet3d BaseInstance3DBoxes and look-alikes
    if tensor is not None and not isinstance(obj, np.ndarray):
        obj = tensor
    if hasattr(obj, 'detach') and hasattr(obj, 'cpu') and hasattr(obj, 'numpy'):  # torch.Tensor
        return obj.detach().cpu().numpy()
    return obj


def results_to_numpy(obj):
    """Recursively replace tensors and box objects by numpy arrays (dicts, lists and tuples are rebuilt;
    anything else is kept as it is). Never validates, so it cannot fail on odd content."""
    if isinstance(obj, dict):
        return {k: results_to_numpy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [results_to_numpy(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(results_to_numpy(v) for v in obj)
    return leaf_to_numpy(obj)


def write_results_pickle(results, path):
    """Atomically pickle ``results_to_numpy(results)`` to ``path`` (directories created) in the form every numpy
    >= 1.17 reads (predictions saved under numpy 2 evaluate under numpy 1.x too); returns path."""
    directory = osp.dirname(osp.abspath(path))
    if not osp.isdir(directory):
        os.makedirs(directory)
    from kradar_plugin.files.portable_pickle import dump
    from kradar_plugin.files.safe_write import open_for_write
    with open_for_write(path) as f:     # a fresh temporary file beside it, never a planted link; then a rename
        dump(results_to_numpy(results), f)
    return path


def new_results_path(directory):
    """``directory/kradar_results_<date>_<time>_<pid>[_k].pkl`` that does not exist yet."""
    stamp = time.strftime('%Y%m%d_%H%M%S')
    path = osp.join(directory, 'kradar_results_{}_{}.pkl'.format(stamp, os.getpid()))
    k = 1
    while osp.exists(path):
        path = osp.join(directory, 'kradar_results_{}_{}_{}.pkl'.format(stamp, os.getpid(), k))
        k += 1
    return path


def unwrap_result(res, where):
    """The per-frame result dict (``{'pts_bbox': {...}}`` unwrapped) or a ValueError naming ``where``."""
    if not isinstance(res, dict):
        raise ValueError('{}: expected a dict, got {}'.format(where, type(res).__name__))
    if 'pts_bbox' in res:
        res = res['pts_bbox']
        if not isinstance(res, dict):
            raise ValueError("{}: 'pts_bbox' is a {}, expected a dict".format(where, type(res).__name__))
    missing = [k for k in RESULT_KEYS if k not in res]
    if missing:   # the keys present as a short text (keys of any type, no huge int converted)
        from kradar_plugin.loading.safe_numpy import short_repr
        keys = '[' + ', '.join(sorted(short_repr(k, 40) for k in res)) + ']'
        raise ValueError('{}: missing {} (keys present: {}); expected {} or {{"pts_bbox": {{...}}}}'.format(
            where, missing, keys if len(keys) <= 300 else keys[:297] + '...', list(RESULT_KEYS)))
    return res


def frame_arrays(res, where):
    """``(boxes (N, 7+) float64, scores (N,) float64, labels (N,) as given)`` of one frame's result, with
    the shape checks only (values: :func:`check_result_values`). A ValueError names ``where``: missing
    keys, boxes not (N, 7+), counts that differ."""
    res = unwrap_result(res, where)
    boxes = _numbers(res['boxes_3d'], where, 'boxes_3d')
    if boxes.size == 0:
        boxes = boxes.reshape(0, max(boxes.shape[-1] if boxes.ndim == 2 else 7, 7))
    if boxes.ndim != 2 or boxes.shape[1] < 7:
        raise ValueError('{}: boxes_3d must have shape (N, 7+) (x, y, z, dx, dy, dz, yaw), got {}'.format(
            where, boxes.shape))
    n = boxes.shape[0]
    scores = _numbers(res['scores_3d'], where, 'scores_3d').reshape(-1)
    labels = _numbers(res['labels_3d'], where, 'labels_3d', None).reshape(-1)
    for field, arr in (('scores_3d', scores), ('labels_3d', labels)):
        if arr.shape[0] != n:
            raise ValueError('{}: {} has {} entries but boxes_3d has {}'.format(where, field, arr.shape[0], n))
    return boxes, scores, labels


def _numbers(value, where, field, dtype=np.float64):
    """``value`` as a numeric array, or a ValueError naming ``where`` and ``field``."""
    value = leaf_to_numpy(value)
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise ValueError('{}: {} cannot be read as numbers (a {}: {})'.format(
            where, field, type(value).__name__, ' '.join(str(exc).split())[:200]))
    if dtype is not None and arr.dtype.kind not in 'biuf':
        raise ValueError('{}: {} must hold numbers, got {} values'.format(where, field, arr.dtype))
    return arr


def _integer_labels(labels):
    try:
        numeric = labels.astype(np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.all(np.equal(np.mod(numeric, 1), 0)))


def check_result_values(boxes, scores, labels, offsets, wheres, class_names=None):
    """The values of frames' results concatenated (frame ``f`` is rows ``offsets[f]:offsets[f+1]``, named
    ``wheres[f]``): non-finite boxes or scores, non-integer labels and (with ``class_names``) labels that are
    no index into ``class_names`` raise a ValueError naming the frame, the field, the row in the frame and
    the value. Returns the labels as int64."""
    offsets = np.asarray(offsets, dtype=np.int64)

    def frame_row(row):
        f = frame_of(offsets, row)
        return f, row - int(offsets[f])

    n = boxes.shape[0]
    for field, arr in ((('boxes_3d', boxes), ('scores_3d', scores)) if n else ()):
        bad = ~np.isfinite(arr.reshape(n, -1)).all(axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            f, local = frame_row(row)
            raise ValueError('{}: {}[{}] = {} is not finite'.format(wheres[f], field, local, arr[row].tolist()))
    if n and boxes.shape[1] >= 6:
        bad = (boxes[:, 3:6] < 0).any(axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            f, local = frame_row(row)
            raise ValueError('{}: boxes_3d[{}] = {} has a negative size (dx, dy, dz)'.format(
                wheres[f], local, boxes[row].tolist()))
    if labels.size and not _integer_labels(labels):
        for f in range(len(offsets) - 1):        # the first frame whose labels are not integers
            part = labels[offsets[f]:offsets[f + 1]]
            if part.size and not _integer_labels(part):
                raise ValueError('{}: labels_3d must be integers, got {}'.format(wheres[f], part[:5].tolist()))
        raise ValueError('{}: labels_3d must be integers'.format(wheres[0]))   # mixed types across frames
    numeric = labels.astype(np.float64) if labels.dtype.kind in 'fb' else labels
    upper = len(class_names) if class_names is not None else 2 ** 62
    bad = (numeric < 0) | (numeric >= upper) if class_names is not None else (numeric >= upper) | (numeric <= -upper)
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        f, local = frame_row(row)
        raise ValueError('{}: labels_3d[{}] = {!r} is not an index into class_names {}'.format(
            wheres[f], local, labels[row].tolist(), list(class_names or ())))
    return labels.astype(np.int64)


def result_arrays(res, where, class_names=None):
    """The one validation of a frame's result: ``(boxes (N, 7+) float64, scores (N,) float64, labels (N,)
    int64)`` from ``{'pts_bbox': {...}}`` or ``{'boxes_3d', 'scores_3d', 'labels_3d'}`` (tensors, box objects,
    arrays, lists): :func:`frame_arrays` then :func:`check_result_values`."""
    boxes, scores, labels = frame_arrays(res, where)
    labels = check_result_values(boxes, scores, labels, (0, len(scores)), [where], class_names)
    return boxes, scores, labels


def gather_results(results, class_names=None, indices=None):
    """All frames' results at once: ``(boxes (M, 7) float64, scores (M,), labels (M,) int64, offsets (F + 1,))``,
    checked as :func:`result_arrays` checks one frame, for the first seven box columns (the evaluated ones:
    velocities after them are not read). ``indices``: the frame numbers errors name (default 0, 1, ...)."""
    wheres = [result_where(i) for i in (range(len(results)) if indices is None else indices)]
    parts = [frame_arrays(res, where) for res, where in zip(results, wheres)]
    offsets = offsets_of([len(p[1]) for p in parts])
    if not parts:
        return np.zeros((0, 7)), np.zeros(0), np.zeros(0, dtype=np.int64), offsets
    boxes = np.concatenate([p[0][:, :7] for p in parts])
    scores = np.concatenate([p[1] for p in parts])
    labels = np.concatenate([p[2] for p in parts])
    return boxes, scores, check_result_values(boxes, scores, labels, offsets, wheres, class_names), offsets


def result_where(index):
    """How errors name frame ``index`` of a result list: ``results[index]``."""
    return 'results[{}]'.format('?' if index is None else index)


def normalize_results(results):
    """Validated per-frame ``{'boxes_3d': (N, 7+) float64, 'scores_3d': (N,) float64, 'labels_3d': (N,)
    int64}`` (``result_arrays`` on every frame); a ValueError names the frame index, the field and the value."""
    return [dict(zip(RESULT_KEYS, result_arrays(res, result_where(i)))) for i, res in enumerate(results)]
