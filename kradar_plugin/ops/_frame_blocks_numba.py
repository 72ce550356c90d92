"""numba kernel of ``frame_blocks.rotate_iou_frames``: same-frame pairs only, serial, ``cache=True``.

Imports numba; the numba gate (``numba_gate``) imports it, compiles it and checks it against numpy. The pair
routine is ``backend_numba_cpu``'s compiled ``_pair`` with the same inputs as its ``_row``, so every
value equals ``rotate_iou_eval``'s (numba backend) to rounding. The circumscribed radii come in
precomputed (a pair on the skip boundary has intersection 0 either way).
"""
import numba

from .backend_numba_cpu import _pair


@numba.njit(cache=True, nogil=True)
def blocks(boxes, off_a, radius_a, query_boxes, cos_b, sin_b, radius_b, boxes_off, query_off, block_off, criterion,
           out):
    for f in range(boxes_off.shape[0] - 1):
        a0 = boxes_off[f]
        a1 = boxes_off[f + 1]
        b0 = query_off[f]
        b1 = query_off[f + 1]
        nq = b1 - b0
        start = block_off[f]
        for a in range(a0, a1):
            row = start + (a - a0) * nq
            for b in range(b0, b1):
                dcx = boxes[a, 0] - query_boxes[b, 0]
                dcy = boxes[a, 1] - query_boxes[b, 1]
                reach = radius_a[a] + radius_b[b]
                if dcx * dcx + dcy * dcy > reach * reach:
                    continue
                inter = _pair(dcx, dcy, off_a[a], cos_b[b], sin_b[b], 0.5 * query_boxes[b, 2],
                              0.5 * query_boxes[b, 3])
                if criterion == 2:
                    out[row + b - b0] = inter
                    continue
                area_b = boxes[a, 2] * boxes[a, 3]
                area_q = query_boxes[b, 2] * query_boxes[b, 3]
                if criterion == -1:
                    denom = area_b + area_q - inter
                elif criterion == 0:
                    denom = area_q
                else:
                    denom = area_b
                out[row + b - b0] = inter / denom if denom > 0 else 0.0
