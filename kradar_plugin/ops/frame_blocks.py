"""Block-diagonal rotated IoU: overlaps of boxes with query boxes of the SAME frame only.

An evaluator needs, for each frame, the (detections x GT) overlap block, never the pairs across frames.
``rotate_iou_frames`` takes all frames at once as concatenated boxes plus offsets and returns the blocks
flattened frame by frame (block ``f`` is ``nb_f x nq_f``, row-major, starting at
``frame_block_offsets(...)[f]``). Each pair is computed exactly as by ``rotate_iou_eval`` (same kernel,
same inputs; equal to rounding): the numba-CPU kernel runs one serial loop over the frames' pairs; without
numba the numpy backend's vectorised pair routine runs on the same-frame pairs only. Pairs whose
circumscribed circles are apart are skipped (0), as in the full-matrix backends.

Backend: ``backend`` or ``$KRADAR_IOU_BACKEND`` as for ``rotate_iou_eval``: 'numba' or 'numpy' (an
explicit 'numba' that cannot run raises ``BackendUnavailable``); 'cuda' (checked by the backend choice) computes
the blocks on the CPU with numba, since a few pairs per frame do not pay for a GPU launch. The automatic
choice is numba when the numba gate (``numba_gate``: import, version facts, this kernel's trial compile
against numpy; the full-matrix kernels are not compiled for it) lets numba run, numpy otherwise, with the
gate's ONE warning naming the cause unless numba is simply not installed.
"""
import numpy as np

from .. import settings
from . import backend_choice, numba_gate
from .boxes import as_boxes, check_criterion, corner_offsets


def frame_block_offsets(boxes_off, query_off):
    """(F + 1,) int64: where each frame's block starts in the flat output (last entry: the total)."""
    nb = np.diff(np.asarray(boxes_off, dtype=np.int64))
    nq = np.diff(np.asarray(query_off, dtype=np.int64))
    out = np.zeros(len(nb) + 1, dtype=np.int64)
    np.cumsum(nb * nq, out=out[1:])
    return out


def rotate_iou_frames(boxes, query_boxes, boxes_off, query_off, criterion=-1, backend=None):
    """Flat float64 overlaps of ``boxes[boxes_off[f]:boxes_off[f+1]]`` with
    ``query_boxes[query_off[f]:query_off[f+1]]`` for every frame ``f`` (criterion as in
    ``rotate_iou_eval``: -1 IoU, 0 / area(query), 1 / area(box), 2 intersection area)."""
    boxes = as_boxes(boxes, 'boxes')
    query_boxes = as_boxes(query_boxes, 'query_boxes')
    criterion = check_criterion(criterion)
    boxes_off = _offsets(boxes_off, len(boxes), 'boxes_off')
    query_off = _offsets(query_off, len(query_boxes), 'query_off')
    if len(boxes_off) != len(query_off):
        raise ValueError('boxes_off has {} frames but query_off has {}'.format(len(boxes_off) - 1,
                                                                              len(query_off) - 1))
    block_off = frame_block_offsets(boxes_off, query_off)
    out = np.zeros(int(block_off[-1]), dtype=np.float64)
    if out.size == 0:
        return out
    kernel = _kernel(backend)
    if kernel is not None:
        radius_q = 0.5 * np.hypot(query_boxes[:, 2], query_boxes[:, 3])
        kernel(boxes, corner_offsets_fast(boxes), 0.5 * np.hypot(boxes[:, 2], boxes[:, 3]), query_boxes,
               np.cos(query_boxes[:, 4]), np.sin(query_boxes[:, 4]), radius_q, boxes_off, query_off, block_off,
               criterion, out)
        return out
    _numpy_blocks(boxes, query_boxes, boxes_off, query_off, block_off, criterion, out)
    return out


#: boxes per block of ``corner_offsets_fast``: its temporaries stay in the CPU caches (a single pass over
#: millions of boxes ran 2-3x slower per box than over thousands)
CORNER_BLOCK = 1 << 15


def corner_offsets_fast(boxes):
    """``boxes.corner_offsets`` (same values bit for bit: each entry is the same sum of two products,
    up to exact sign flips), without broadcasting temporaries, ``CORNER_BLOCK`` boxes at a time;
    C-contiguous (N, 4, 2)."""
    out = np.empty((len(boxes), 4, 2), dtype=np.float64)
    for start in range(0, len(boxes), CORNER_BLOCK):
        block = boxes[start:start + CORNER_BLOCK]
        c = np.cos(block[:, 4])
        s = np.sin(block[:, 4])
        hw = 0.5 * block[:, 2]
        hh = 0.5 * block[:, 3]
        cu, su, cv, sv = c * hw, s * hw, c * hh, s * hh
        part = out[start:start + CORNER_BLOCK]
        # corner signs (u, v): (-1, -1), (1, -1), (1, 1), (-1, 1); x = c*u + s*v, y = -s*u + c*v
        for k, (su_sign, sv_sign) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
            part[:, k, 0] = (cu if su_sign > 0 else -cu) + (sv if sv_sign > 0 else -sv)
            part[:, k, 1] = (-su if su_sign > 0 else su) + (cv if sv_sign > 0 else -cv)
    return out


def _offsets(off, n, name):
    off = np.asarray(off)
    if off.ndim != 1 or len(off) < 1 or not np.issubdtype(off.dtype, np.integer):
        raise ValueError('{} must be a 1-d integer array of F + 1 frame offsets'.format(name))
    off = np.ascontiguousarray(off, dtype=np.int64)
    if off[0] != 0 or off[-1] != n or np.any(np.diff(off) < 0):
        raise ValueError('{} must rise from 0 to {} (the number of boxes), got {} .. {}'.format(
            name, n, int(off[0]), int(off[-1])))
    return off


def _kernel(backend):
    """The compiled block kernel, or None for numpy; raises for an explicit backend that cannot run."""
    name = backend or settings.raw(settings.IOU_BACKEND).lower() or None
    if name == 'numpy':
        return None
    if name == 'cuda':
        backend_choice.select('cuda')                  # raises BackendUnavailable, as rotate_iou_eval does
    elif name not in (None, 'numba'):
        backend_choice.select(name)                    # backend_choice's ValueError for an unknown name
    if name == 'numba':
        backend_choice.gate('numba')                   # BackendUnavailable when the gate refuses numba
    kernel = numba_gate.frame_kernel()
    if kernel is None:
        numba_gate.warn(stacklevel=4)
    return kernel


def _numpy_blocks(boxes, query_boxes, boxes_off, query_off, block_off, criterion, out):
    from .backend_numpy import CHUNK_PAIRS, _pairs
    nb = np.diff(boxes_off)
    nq = np.diff(query_off)
    off_a = corner_offsets(boxes)
    radius_a = 0.5 * np.hypot(boxes[:, 2], boxes[:, 3])
    radius_b = 0.5 * np.hypot(query_boxes[:, 2], query_boxes[:, 3])
    cos_b = np.cos(query_boxes[:, 4])
    sin_b = np.sin(query_boxes[:, 4])
    total = len(out)
    frames = np.repeat(np.arange(len(nb), dtype=np.int64), nb * nq)
    for p0 in range(0, total, CHUNK_PAIRS):
        p1 = min(total, p0 + CHUNK_PAIRS)
        f = frames[p0:p1]
        local = np.arange(p0, p1, dtype=np.int64) - block_off[f]
        a = boxes_off[f] + local // nq[f]
        b = query_off[f] + local % nq[f]
        dcx = boxes[a, 0] - query_boxes[b, 0]
        dcy = boxes[a, 1] - query_boxes[b, 1]
        reach = radius_a[a] + radius_b[b]
        near = np.nonzero(dcx * dcx + dcy * dcy <= reach * reach)[0]
        if len(near) == 0:
            continue
        a, b = a[near], b[near]
        inter = _pairs(dcx[near], dcy[near], off_a[a], cos_b[b], sin_b[b], 0.5 * query_boxes[b, 2],
                       0.5 * query_boxes[b, 3])
        out[p0 + near] = _criterion(inter, boxes[a, 2] * boxes[a, 3], query_boxes[b, 2] * query_boxes[b, 3],
                                    criterion)


def _criterion(inter, area_b, area_q, criterion):
    """As ``boxes.apply_criterion``, pair by pair."""
    if criterion == 2:
        return inter
    if criterion == -1:
        denom = area_b + area_q - inter
    elif criterion == 0:
        denom = area_q
    else:
        denom = area_b
    out = np.zeros_like(inter)
    np.divide(inter, denom, out=out, where=denom > 0)
    return out
