"""numba-CPU backend: ``clamp_kernel`` compiled with ``njit``, parallel over the rows of ``boxes``.

Importing this module imports numba; ``kradar_plugin.ops`` does so only when this backend is chosen.
``cache=True`` keeps the machine code on disk, so a new process does not recompile. Pairs whose
circumscribed circles do not meet are skipped, as in the numpy backend.
"""
import numba
import numpy as np

from .boxes import corner_offsets
from .clamp_kernel import make_pair_intersection

_pair = make_pair_intersection(numba.njit(cache=True))


@numba.njit(cache=True)
def _row(a, boxes, off_a, query_boxes, cos_b, sin_b, out):
    radius_a = 0.5 * np.hypot(boxes[a, 2], boxes[a, 3])
    for b in range(query_boxes.shape[0]):
        dcx = boxes[a, 0] - query_boxes[b, 0]
        dcy = boxes[a, 1] - query_boxes[b, 1]
        reach = radius_a + 0.5 * np.hypot(query_boxes[b, 2], query_boxes[b, 3])
        if dcx * dcx + dcy * dcy > reach * reach:
            continue  # circumscribed circles apart: out stays 0
        out[a, b] = _pair(dcx, dcy, off_a[a], cos_b[b], sin_b[b], 0.5 * query_boxes[b, 2], 0.5 * query_boxes[b, 3])


@numba.njit(cache=True, parallel=True)
def _rows_parallel(boxes, off_a, query_boxes, cos_b, sin_b, out):
    for a in numba.prange(boxes.shape[0]):
        _row(a, boxes, off_a, query_boxes, cos_b, sin_b, out)


@numba.njit(cache=True)
def _rows_serial(boxes, off_a, query_boxes, cos_b, sin_b, out):
    for a in range(boxes.shape[0]):
        _row(a, boxes, off_a, query_boxes, cos_b, sin_b, out)


# Below this many pairs waking the thread pool costs more than it saves (the evaluator's frame groups).
PARALLEL_MIN_PAIRS = 20000


def intersection_areas(boxes, query_boxes):
    """(N, K) float64 intersection areas; same contract as backend_numpy.intersection_areas."""
    out = np.zeros((len(boxes), len(query_boxes)), dtype=np.float64)
    if out.size:
        run = _rows_parallel if out.size >= PARALLEL_MIN_PAIRS else _rows_serial
        run(boxes, np.ascontiguousarray(corner_offsets(boxes)), query_boxes,
                       np.cos(query_boxes[:, 4]), np.sin(query_boxes[:, 4]), out)
    return out
