"""Pure-numpy backend: exact intersection areas of rotated rectangles, vectorised over pairs.

Method ("clamp clipping"): express box A's corners in box B's frame, where B is the axis-aligned
rectangle [-hx, hx] x [-hy, hy]. Mapping A's boundary through the clamp C(u, v) = (clip(u), clip(v))
gives a closed curve whose signed area equals area(A ∩ B): C is a retraction onto B that never moves a
point across B's interior, so winding numbers inside B are kept and are 0 outside. C is linear along
each edge of A between the parameters where the edge crosses the lines u = ±hx, v = ±hy, so sampling
each edge at t = 0 and those (sorted) crossings makes the polygon exact. There is no point-in-polygon
test and no angle sort, so identical, touching and collinear boxes need no epsilon and never give NaN.
"""
import numpy as np

from .boxes import corner_offsets

# Pairs per chunk: bounds temporary memory to a few hundred MB at most.
CHUNK_PAIRS = 1 << 16


def intersection_areas(boxes, query_boxes):
    """(N, K) float64 intersection areas of boxes[n] and query_boxes[k] (both float64 (·, 5))."""
    n, k = len(boxes), len(query_boxes)
    out = np.zeros((n, k), dtype=np.float64)
    if n == 0 or k == 0:
        return out
    off_a = corner_offsets(boxes)                       # (N, 4, 2)
    cos_b = np.cos(query_boxes[:, 4])
    sin_b = np.sin(query_boxes[:, 4])
    hx = 0.5 * query_boxes[:, 2]
    hy = 0.5 * query_boxes[:, 3]
    rows = max(1, CHUNK_PAIRS // k)
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        out[r0:r1] = _chunk(boxes[r0:r1], off_a[r0:r1], query_boxes, cos_b, sin_b, hx, hy)
    return out


def _chunk(boxes, off_a, query_boxes, cos_b, sin_b, hx, hy):
    # Corner positions of A relative to B's centre, (n, K, 4) per coordinate.
    dcx = boxes[:, None, 0] - query_boxes[None, :, 0]
    dcy = boxes[:, None, 1] - query_boxes[None, :, 1]
    dx = dcx[:, :, None] + off_a[:, None, :, 0]
    dy = dcy[:, :, None] + off_a[:, None, :, 1]
    c = cos_b[None, :, None]
    s = sin_b[None, :, None]
    u = c * dx - s * dy                                  # B's frame (inverse of R(-angle_b))
    v = s * dx + c * dy
    hx = hx[None, :, None]
    hy = hy[None, :, None]
    du = np.roll(u, -1, axis=2) - u                      # edge i goes from corner i to corner i+1
    dv = np.roll(v, -1, axis=2) - v
    t = np.stack([_crossing(-hx, u, du), _crossing(hx, u, du),
                  _crossing(-hy, v, dv), _crossing(hy, v, dv)], axis=-1)
    _sort4(t)
    t = np.concatenate([np.zeros(t.shape[:-1] + (1,)), t], axis=-1)   # (n, K, 4 edges, 5 samples)
    pu = np.clip(u[..., None] + t * du[..., None], -hx[..., None], hx[..., None])
    pv = np.clip(v[..., None] + t * dv[..., None], -hy[..., None], hy[..., None])
    shape = pu.shape[:2] + (-1,)
    pu = pu.reshape(shape)
    pv = pv.reshape(shape)
    twice = (pu * np.roll(pv, -1, axis=2) - np.roll(pu, -1, axis=2) * pv).sum(axis=2)
    return 0.5 * np.abs(twice)


def _crossing(line, p, dp):
    """Edge parameter in (0, 1) where p + t*dp crosses ``line``; 0 (a harmless repeat of the edge start)
    where it does not cross or the edge is parallel to the line."""
    with np.errstate(divide='ignore', invalid='ignore'):
        t = (line - p) / dp
    return np.where((t > 0.0) & (t < 1.0), t, 0.0)


def _sort4(t):
    """Sort the last axis (length 4) in place with a 5-comparator network."""
    for i, j in ((0, 1), (2, 3), (0, 2), (1, 3), (1, 2)):
        a = t[..., i].copy()
        b = t[..., j]
        t[..., i] = np.minimum(a, b)
        t[..., j] = np.maximum(a, b)
