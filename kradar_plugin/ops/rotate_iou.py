"""Public rotated-IoU API with mmdet3d's ``rotate_iou_gpu_eval`` semantics, computed in float64.

boxes (N, 5) and query_boxes (K, 5) are (x, y, w, h, angle) with corners rotated by R(-angle); the
result is (N, K). criterion -1: IoU; 0: intersection / area(query_boxes[k]); 1: intersection /
area(boxes[n]); 2: intersection area. A box's area is w * h. A zero denominator gives 0, never NaN.
"""
import numpy as np

from . import backend_choice
from .boxes import apply_criterion, as_boxes, check_criterion


def rotate_iou_eval(boxes, query_boxes, criterion=-1, backend=None):
    """Overlap of every box with every query box. ``backend``: None (automatic or $KRADAR_IOU_BACKEND),
    'cuda', 'numba' or 'numpy'; an explicitly requested backend that cannot run raises
    ``backend_choice.BackendUnavailable``."""
    return _overlaps(boxes, query_boxes, criterion, backend, device_id=None)


def rotate_iou_gpu_eval(boxes, query_boxes, criterion=-1, device_id=0):
    """Drop-in for mmdet3d's function of the same name: same arguments and semantics, but it picks a
    working backend instead of crashing when numba's CUDA target is broken or absent."""
    return _overlaps(boxes, query_boxes, criterion, None, device_id=device_id)


def _overlaps(boxes, query_boxes, criterion, backend, device_id):
    boxes = as_boxes(boxes, 'boxes')
    query_boxes = as_boxes(query_boxes, 'query_boxes')
    criterion = check_criterion(criterion)
    if len(boxes) == 0 or len(query_boxes) == 0:
        return np.zeros((len(boxes), len(query_boxes)), dtype=np.float64)
    chosen = backend_choice.select(backend)
    if chosen.name == 'cuda' and device_id is not None:
        inter = chosen.intersection_areas(boxes, query_boxes, device_id=device_id)
    else:
        inter = chosen.intersection_areas(boxes, query_boxes)
    return apply_criterion(inter, boxes, query_boxes, criterion)
