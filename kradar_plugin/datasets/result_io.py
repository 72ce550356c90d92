"""Model results -> plain numpy, saved to a pickle that loads without torch or mmdet3d.

Two steps on purpose: ``results_to_numpy`` never raises on unexpected content (it only converts tensors and
box objects it recognises), so the raw results can be written to disk before anything is validated;
``normalize_results`` then checks every frame and gives the evaluator one layout:
``{'boxes_3d': (N, 7+) float64 (x, y, z_bottom, dx, dy, dz, yaw, ...), 'scores_3d': (N,), 'labels_3d': (N,)}``.
Accepted per-frame inputs: ``{'pts_bbox': {...}}`` (mmdet3d/EchoFusion) or ``{'boxes_3d', 'scores_3d',
'labels_3d'}``, where ``boxes_3d`` is a ``LiDARInstance3DBoxes`` (anything with a ``.tensor``), a torch
tensor or an array of shape (N, 7+).
"""
import os
import os.path as osp
import pickle

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
        pickle.dump(results_to_numpy(results), f, protocol=2)
    os.replace(tmp, path)
    return path


def load_results_pickle(path):
    with open(path, 'rb') as f:
        return pickle.load(f)


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


def normalize_results(results):
    """Validated per-frame ``{'boxes_3d': (N, 7+) float64, 'scores_3d': (N,) float64, 'labels_3d': (N,)
    int64}``; a ValueError names the frame index, the field and the bad value."""
    out = []
    for i, res in enumerate(results):
        res = results_to_numpy(unwrap_result(res, 'result {}'.format(i)))
        boxes = np.asarray(res['boxes_3d'], dtype=np.float64)
        if boxes.size == 0:
            boxes = boxes.reshape(0, max(boxes.shape[-1] if boxes.ndim == 2 else 7, 7))
        if boxes.ndim != 2 or boxes.shape[1] < 7:
            raise ValueError('result {}: boxes_3d must have shape (N, 7+) (x, y, z_bottom, dx, dy, dz, yaw), '
                             'got {}'.format(i, boxes.shape))
        n = boxes.shape[0]
        scores = np.asarray(res['scores_3d'], dtype=np.float64).reshape(-1)
        labels = np.asarray(res['labels_3d']).reshape(-1)
        for field, arr in (('scores_3d', scores), ('labels_3d', labels)):
            if arr.shape[0] != n:
                raise ValueError('result {}: {} has {} entries but boxes_3d has {}'.format(i, field, arr.shape[0], n))
        if labels.size and not np.all(np.equal(np.mod(labels, 1), 0)):
            raise ValueError('result {}: labels_3d must be integers, got {}'.format(i, labels[:5]))
        out.append({'boxes_3d': boxes, 'scores_3d': scores, 'labels_3d': labels.astype(np.int64)})
    return out
