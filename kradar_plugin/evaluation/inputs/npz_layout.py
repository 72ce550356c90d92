"""K-Radar inputs as ``.npz`` files: flat columns and frame offsets, no pickle (the way to share predictions).

An ``.npz`` written by ``kradar-eval --export DIR`` holds ``kradar_npz`` (a 0-d string: 'annos', 'results'
or 'infos'), ``offsets`` ((F + 1,) int64: frame ``f`` is rows ``offsets[f]:offsets[f+1]``) and columns:

* annos (``--gt-annos``/``--dt-annos``): the evaluator layout, ``name``, ``location`` (M, 3), ``dimensions``
  (M, 3), ``rotation_y``, ``truncated``, ``occluded``, ``alpha``, ``bbox`` (M, 4) and, for detections, ``score``;
* results (``--results``): ``boxes_3d`` (M, 7) (x, y, z, dx, dy, dz, yaw as the model wrote them),
  ``scores_3d``, ``labels_3d`` (int64);
* infos (``--infos``): the GT of the infos in their layout (``name``, ``location``, ``dimensions``,
  ``rotation_y``, ``truncated``, ``occluded``, ``alpha``, ``bbox``) and, when the infos carry them, the
  conditions per frame (``road_type``, ``capture_time``, ``climate``, ``sequence``: (F,) strings).

Arrays only, read with ``np.load(allow_pickle=False)``: like safetensors for weights, loading one runs no code.
"""
import os

import numpy as np

KIND = 'kradar_npz'
CONDITION_KEYS = ('road_type', 'capture_time', 'climate', 'sequence')
_ANNO_KEYS = ('name', 'location', 'dimensions', 'rotation_y', 'truncated', 'occluded', 'alpha', 'bbox', 'score')
_WIDTHS = {'location': (3,), 'dimensions': (3,), 'bbox': (4,)}   # the trailing shape of the 2-D columns


def kind_of(content):
    """'annos', 'results', 'infos' for an exported .npz's content, else None."""
    if isinstance(content, dict) and KIND in content and isinstance(content[KIND], np.ndarray):
        return str(content[KIND])
    return None


def _expect(content, kind):
    got = kind_of(content)
    if got != kind:
        raise ValueError('an .npz of {} where {} are expected'.format(got or 'unknown arrays', kind))
    offsets = np.asarray(content.get('offsets'))
    if offsets.ndim != 1 or offsets.dtype.kind not in 'iu' or len(offsets) < 1 or offsets[0] != 0 or (
            np.diff(offsets) < 0).any():
        raise ValueError("'offsets' must be non-decreasing frame offsets from 0, got {} {}".format(
            offsets.dtype, offsets.shape))
    return offsets.astype(np.int64)


def _rows(content, key, offsets, trailing=()):
    arr = content.get(key)
    if arr is None:
        raise ValueError('no {!r} array'.format(key))
    if arr.shape != (int(offsets[-1]),) + trailing:
        raise ValueError('{!r} has shape {}, expected {}'.format(key, arr.shape, (int(offsets[-1]),) + trailing))
    return arr


def annos_side(content, side, fields, check_side):
    """A ``validation.CheckedSide``: of an exported .npz, or ``check_side(content, side, fields)``."""
    if kind_of(content) is None:
        return check_side(content, side, fields)
    from kradar_plugin.evaluation.validation import check_columns
    offsets = _expect(content, 'annos')
    data = dict((k, _rows(content, k, offsets, _WIDTHS.get(k, ()))) for k in _ANNO_KEYS
                if k in content and (k != 'score' or side == 'dt_annos'))
    if data['name'].dtype.kind not in 'US':
        raise ValueError("'name' must hold strings, got {}".format(data['name'].dtype))
    return check_columns(side, data, offsets, fields)


def result_frames(content, class_names, gather):
    """Detection ``Gathered`` of an exported .npz (checked like pickled results), or ``gather(list)``."""
    if kind_of(content) is None:
        if not isinstance(content, (list, tuple)):
            raise ValueError('expected a list with one result per frame, got {}'.format(type(content).__name__))
        return gather(list(content), class_names)
    from kradar_plugin.evaluation.inputs.kradar_columns import Gathered
    from kradar_plugin.evaluation.inputs.result_io import check_result_values, result_where
    offsets = _expect(content, 'results')
    n = int(offsets[-1])
    boxes = np.asarray(content.get('boxes_3d', np.zeros((0, 7))), dtype=np.float64)
    if boxes.ndim != 2 or boxes.shape[0] != n or boxes.shape[1] < 7:
        raise ValueError("'boxes_3d' has shape {}, expected ({}, 7)".format(boxes.shape, n))
    scores = np.asarray(_rows(content, 'scores_3d', offsets), dtype=np.float64)
    labels = _rows(content, 'labels_3d', offsets)
    wheres = [result_where(i) for i in range(len(offsets) - 1)]
    labels = check_result_values(boxes[:, :7], scores, labels, offsets, wheres, class_names)
    return Gathered({'boxes': boxes[:, :7], 'scores': scores, 'labels': labels}, offsets)


def info_columns(content):
    """(GT ``Gathered`` in the info layout, condition rows or None) of an exported infos .npz."""
    from kradar_plugin.evaluation.inputs.kradar_columns import Gathered
    offsets = _expect(content, 'infos')
    arrays = {}
    for key in _ANNO_KEYS[:-1]:
        arr = _rows(content, key, offsets, _WIDTHS.get(key, ()))
        arrays[key] = arr.astype(str) if key == 'name' else np.asarray(arr, dtype=np.float64)
        if key != 'name' and not np.isfinite(arrays[key]).all():
            raise ValueError('{!r} holds values that are not finite'.format(key))
    rows = None
    if all(k in content for k in CONDITION_KEYS):
        cols = [content[k] for k in CONDITION_KEYS]
        if any(c.shape != (len(offsets) - 1,) or c.dtype.kind not in 'US' for c in cols):
            raise ValueError('condition columns must hold one string per frame')
        rows = [dict(zip(CONDITION_KEYS, values)) for values in zip(*[c.astype(str).tolist() for c in cols])]
    return Gathered(arrays, offsets), rows


def write(directory, source, kind, columns, offsets):
    """Write ``directory/<source's name>.npz``; returns its path."""
    from kradar_plugin.files.safe_write import open_for_write
    if not os.path.isdir(directory):
        try:
            os.makedirs(directory, exist_ok=True)    # two worker processes export side by side
        except OSError as exc:
            raise ValueError('--export {!r}: cannot make the folder ({})'.format(directory, exc.strerror or exc))
    base = os.path.splitext(os.path.basename(source.rstrip('/')))[0] or 'input'
    path = os.path.join(directory, base + '.npz')
    arrays = dict((k, np.asarray(v)) for k, v in columns.items())
    arrays[KIND] = np.array(kind)
    arrays['offsets'] = np.asarray(offsets, dtype=np.int64)
    for key, value in arrays.items():
        if value.dtype.kind == 'O':
            arrays[key] = value.astype(str)
    with open_for_write(path) as f:     # a fresh temporary file renamed over the name: never through a link
        np.savez_compressed(f, **arrays)
    return path
