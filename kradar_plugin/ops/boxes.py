"""Input checks and shared geometry for rotated boxes (x, y, w, h, angle).

Corner convention (mmdet3d's ``rotate_iou``): a local offset (u, v) maps to
``(x + cos(a) u + sin(a) v, y - sin(a) u + cos(a) v)``, i.e. the box is rotated by R(-angle).
"""
import numpy as np

# Local corner offsets in units of (w/2, h/2), counter-clockwise before rotation.
CORNER_SIGNS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
CRITERIA = (-1, 0, 1, 2)


def as_boxes(boxes, name):
    """Return ``boxes`` as a C-contiguous float64 (N, 5) array or raise ValueError naming ``name``,
    the first bad row and its values. Integer and float16 input is accepted."""
    arr = np.asarray(_to_numpy(boxes))
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError('%s must be a numeric array of shape (N, 5), got dtype %s' % (name, arr.dtype))
    if arr.ndim != 2 or arr.shape[1] != 5:
        raise ValueError('%s must have shape (N, 5) = (x, y, w, h, angle), got shape %s'
                         % (name, tuple(arr.shape)))
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise ValueError('%s row %d has a NaN or infinite value: %s' % (name, row, arr[row].tolist()))
    negative = (arr[:, 2] < 0) | (arr[:, 3] < 0)
    if negative.any():
        row = int(np.flatnonzero(negative)[0])
        raise ValueError('%s row %d has a negative width or height: %s' % (name, row, arr[row].tolist()))
    return arr


def check_criterion(criterion):
    if criterion not in CRITERIA or isinstance(criterion, bool):
        raise ValueError('criterion must be one of -1 (IoU), 0 (inter / area(query_boxes)), '
                         '1 (inter / area(boxes)) or 2 (intersection area), got %r' % (criterion,))
    return int(criterion)


def apply_criterion(inter, boxes, query_boxes, criterion):
    """Turn an (N, K) intersection-area matrix into the requested overlap; 0 where a denominator is 0
    (degenerate boxes never give NaN)."""
    if criterion == 2:
        return inter
    area_b = boxes[:, 2] * boxes[:, 3]
    area_q = query_boxes[:, 2] * query_boxes[:, 3]
    if criterion == -1:
        denom = area_b[:, None] + area_q[None, :] - inter
    elif criterion == 0:
        denom = np.broadcast_to(area_q[None, :], inter.shape)
    else:
        denom = np.broadcast_to(area_b[:, None], inter.shape)
    out = np.zeros_like(inter)
    np.divide(inter, denom, out=out, where=denom > 0)
    return out


def corner_offsets(boxes):
    """(N, 4, 2) corner offsets from each box centre, rotated by R(-angle), counter-clockwise."""
    c = np.cos(boxes[:, 4])[:, None]
    s = np.sin(boxes[:, 4])[:, None]
    u = CORNER_SIGNS[None, :, 0] * (0.5 * boxes[:, 2:3])
    v = CORNER_SIGNS[None, :, 1] * (0.5 * boxes[:, 3:4])
    return np.stack([c * u + s * v, -s * u + c * v], axis=-1)


def _to_numpy(x):
    """Accept torch tensors (any device) without importing torch."""
    if hasattr(x, 'detach') and hasattr(x, 'cpu'):
        return x.detach().cpu().numpy()
    return x
