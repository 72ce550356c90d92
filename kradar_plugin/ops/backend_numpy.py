"""Pure-numpy backend: exact intersection areas of rotated rectangles, vectorised over pairs.

Method ("clamp clipping"): express box A's corners in box B's frame, where B is the axis-aligned
rectangle [-hx, hx] x [-hy, hy]. Mapping A's boundary through the clamp C(u, v) = (clip(u), clip(v))
gives a closed curve whose signed area equals area(A ∩ B): C is a retraction onto B that never moves a
point across B's interior, so winding numbers inside B are kept and are 0 outside. C is linear along
each edge of A between the parameters where the edge crosses the lines u = ±hx, v = ±hy, so sampling
each edge at t = 0 and those (sorted) crossings makes the polygon exact. There is no point-in-polygon
test and no angle sort, so identical, touching and collinear boxes need no epsilon and never give NaN.
Pairs whose circumscribed circles do not meet are skipped (their intersection is 0).
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
    radius_a = 0.5 * np.hypot(boxes[:, 2], boxes[:, 3])
    radius_b = 0.5 * np.hypot(query_boxes[:, 2], query_boxes[:, 3])
    cos_b = np.cos(query_boxes[:, 4])
    sin_b = np.sin(query_boxes[:, 4])
    rows = max(1, CHUNK_PAIRS // k)
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        dcx = boxes[r0:r1, 0, None] - query_boxes[None, :, 0]
        dcy = boxes[r0:r1, 1, None] - query_boxes[None, :, 1]
        reach = radius_a[r0:r1, None] + radius_b[None, :]
        ia, ib = np.nonzero(dcx * dcx + dcy * dcy <= reach * reach)
        if len(ia):
            out[ia + r0, ib] = _pairs(dcx[ia, ib], dcy[ia, ib], off_a[ia + r0], cos_b[ib], sin_b[ib],
                                      0.5 * query_boxes[ib, 2], 0.5 * query_boxes[ib, 3])
    return out


def _pairs(dcx, dcy, off, c, s, hx, hy):
    """Intersection areas of P pairs: (P,) centre differences, (P, 4, 2) corner offsets of A, (P,) cos,
    sin of B's angle and B's half sizes."""
    dx = dcx[:, None] + off[:, :, 0]
    dy = dcy[:, None] + off[:, :, 1]
    c = c[:, None]
    s = s[:, None]
    u = c * dx - s * dy                                  # B's frame (inverse of R(-angle_b))
    v = s * dx + c * dy
    u = np.concatenate([u, u[:, :1]], axis=1)            # close the loop: edge i is corner i -> i + 1
    v = np.concatenate([v, v[:, :1]], axis=1)
    du = u[:, 1:] - u[:, :-1]
    dv = v[:, 1:] - v[:, :-1]
    u = u[:, :-1]
    v = v[:, :-1]
    hx = hx[:, None]
    hy = hy[:, None]
    with np.errstate(divide='ignore', invalid='ignore'):
        inv_du = 1.0 / du                                # inf on edges parallel to the u lines
        inv_dv = 1.0 / dv
        t = np.stack([(-hx - u) * inv_du, (hx - u) * inv_du, (-hy - v) * inv_dv, (hy - v) * inv_dv], axis=-1)
    # Crossings outside (0, 1), and the nan/inf of parallel edges, become 0: a repeat of the edge start.
    t[~((t > 0.0) & (t < 1.0))] = 0.0
    _sort4(t)
    samples = np.empty(t.shape[:-1] + (5,))
    samples[..., 0] = 0.0
    samples[..., 1:] = t                                 # (P, 4 edges, 5 samples)
    pu = u[..., None] + samples * du[..., None]
    pv = v[..., None] + samples * dv[..., None]
    hx = hx[..., None]
    hy = hy[..., None]
    np.minimum(np.maximum(pu, -hx, out=pu), hx, out=pu)
    np.minimum(np.maximum(pv, -hy, out=pv), hy, out=pv)
    pu = pu.reshape(len(pu), -1)
    pv = pv.reshape(len(pv), -1)
    twice = (pu[:, :-1] * pv[:, 1:] - pu[:, 1:] * pv[:, :-1]).sum(axis=1) + pu[:, -1] * pv[:, 0] - pu[:, 0] * pv[:, -1]
    return 0.5 * np.abs(twice)


def _sort4(t):
    """Sort the last axis (length 4) in place with a 5-comparator network."""
    for i, j in ((0, 1), (2, 3), (0, 2), (1, 3), (1, 2)):
        a = t[..., i].copy()
        b = t[..., j]
        t[..., i] = np.minimum(a, b)
        t[..., j] = np.maximum(a, b)
