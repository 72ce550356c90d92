"""Model results -> plain numpy, saved to a pickle that loads without torch or mmdet3d.

Two steps on purpose: ``results_to_numpy`` never raises on unexpected content (it only converts tensors and
box objects it recognises), so the raw results can be written to disk before anything is validated;
``normalize_results`` then checks every frame (``result_arrays``, the one validation of a frame's result, also
used by ``kradar_format``) and gives the evaluator one layout:
``{'boxes_3d': (N, 7+) float64 (x, y, z, dx, dy, dz, yaw, ...), 'scores_3d': (N,), 'labels_3d': (N,)}``.
Accepted per-frame inputs: ``{'pts_bbox': {...}}`` (mmdet3d/EchoFusion) or ``{'boxes_3d', 'scores_3d',
'labels_3d'}``, where ``boxes_3d`` is a ``LiDARInstance3DBoxes`` (anything with a ``.tensor``), a torch
tensor or an array of shape (N, 7+).
"""
import os
import os.path as osp
import pickle
import time

import numpy as np

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
    """Atomically pickle ``results_to_numpy(results)`` to ``path`` (directories created); returns path."""
    directory = osp.dirname(osp.abspath(path))
    if not osp.isdir(directory):
        os.makedirs(directory)
    tmp = path + '.tmp{}'.format(os.getpid())
    with open(tmp, 'wb') as f:
        pickle.dump(results_to_numpy(results), f, protocol=4)
    os.replace(tmp, path)
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
    if missing:
        raise ValueError('{}: missing {} (keys present: {}); expected {} or {{"pts_bbox": {{...}}}}'.format(
            where, missing, sorted(res), list(RESULT_KEYS)))
    return res


def result_arrays(res, where, class_names=None):
    """The one validation of a frame's result: ``(boxes (N, 7+) float64, scores (N,) float64, labels (N,)
    int64)`` from ``{'pts_bbox': {...}}`` or ``{'boxes_3d', 'scores_3d', 'labels_3d'}`` (tensors, box objects,
    arrays, lists). A ValueError names ``where``, the field and the bad value: missing keys, boxes not
    (N, 7+), counts that differ, non-finite boxes or scores, non-integer labels, and (with ``class_names``)
    labels that are no index into ``class_names``."""
    res = unwrap_result(res, where)
    boxes = np.asarray(leaf_to_numpy(res['boxes_3d']), dtype=np.float64)
    if boxes.size == 0:
        boxes = boxes.reshape(0, max(boxes.shape[-1] if boxes.ndim == 2 else 7, 7))
    if boxes.ndim != 2 or boxes.shape[1] < 7:
        raise ValueError('{}: boxes_3d must have shape (N, 7+) (x, y, z, dx, dy, dz, yaw), got {}'.format(
            where, boxes.shape))
    n = boxes.shape[0]
    scores = np.asarray(leaf_to_numpy(res['scores_3d']), dtype=np.float64).reshape(-1)
    labels = np.asarray(leaf_to_numpy(res['labels_3d'])).reshape(-1)
    for field, arr in (('scores_3d', scores), ('labels_3d', labels)):
        if arr.shape[0] != n:
            raise ValueError('{}: {} has {} entries but boxes_3d has {}'.format(where, field, arr.shape[0], n))
    for field, arr in (('boxes_3d', boxes), ('scores_3d', scores)):
        if not np.all(np.isfinite(arr)):
            row = int(np.nonzero(~np.isfinite(arr.reshape(n, -1)).all(axis=1))[0][0])
            raise ValueError('{}: {}[{}] = {} is not finite'.format(where, field, row, arr[row].tolist()))
    if labels.size:
        try:
            numeric = labels.astype(np.float64)
        except (TypeError, ValueError):
            numeric = None
        if numeric is None or not np.all(np.equal(np.mod(numeric, 1), 0)):
            raise ValueError('{}: labels_3d must be integers, got {}'.format(where, labels[:5].tolist()))
    labels = labels.astype(np.int64)
    if class_names is not None:
        bad = (labels < 0) | (labels >= len(class_names))
        if bad.any():
            row = int(np.nonzero(bad)[0][0])
            raise ValueError('{}: labels_3d[{}] = {} is not an index into class_names {}'.format(
                where, row, int(labels[row]), list(class_names)))
    return boxes, scores, labels


def result_where(index):
    """How errors name frame ``index`` of a result list: ``results[index]``."""
    return 'results[{}]'.format('?' if index is None else index)


def normalize_results(results):
    """Validated per-frame ``{'boxes_3d': (N, 7+) float64, 'scores_3d': (N,) float64, 'labels_3d': (N,)
    int64}`` (``result_arrays`` on every frame); a ValueError names the frame index, the field and the value."""
    return [dict(zip(RESULT_KEYS, result_arrays(res, result_where(i)))) for i, res in enumerate(results)]
