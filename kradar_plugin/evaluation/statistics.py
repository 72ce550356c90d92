"""KITTI-style matching statistics over all frames (numba-compiled when available).

Inputs are flat arrays with per-frame offsets, so a whole data set is one call:

* ``gt_off``, ``dt_off`` (F + 1,) int64: frame ``f`` owns GT ``gt_off[f]:gt_off[f+1]`` and detections
  ``dt_off[f]:dt_off[f+1]``;
* ``ov`` flat float64 and ``ov_off`` (F,): frame ``f``'s overlap block (rows: detections, columns: GT)
  starts at ``ov_off[f]``;
* ``ign_gt`` / ``ign_dt`` int64: 0 counted, 1 ignored (may match without counting), -1 other class;
* ``dcov`` / ``dcov_off`` / ``dc_num``: detection-vs-DontCare overlaps (2D metric only; else empty).

Matching rules are the KITTI ones the legacy evaluators use: a first pass (``compute_fp`` False) picks
for each GT, in GT order, the highest-scoring unassigned detection above the IoU threshold and yields the
true-positive scores; at a score threshold ``t`` (detections with score < t are ignored) a second pass
picks the highest-overlap detection, preferring counted over ignored ones. A frame's statistics depend
on ``t`` only through the set of detections with score >= t, so :func:`accumulate_pr` evaluates each
frame once per distinct score level and spreads the result over all thresholds with difference arrays:
the counts equal a direct per-threshold evaluation, at a cost independent of the number of thresholds.
"""
import numpy as np

from ._jit import jit

_NO_DETECTION = -10000000.0


@jit
def match_frame(ov, ov_start, ng, nd, gt0, dt0, ign_gt, ign_dt, scores, gt_alpha, dt_alpha, dcov,
                dcov_start, ndc, min_overlap, thresh, compute_fp, compute_aos, tp_scores, n_tp):
    """Match one frame; returns (tp, fp, fn, similarity, n_tp) and appends TP scores to ``tp_scores``.

    ``similarity`` is -1 when there is neither a TP nor a FP (the legacy convention: not accumulated).
    """
    assigned = np.zeros(nd, dtype=np.bool_)
    below = np.zeros(nd, dtype=np.bool_)
    if compute_fp:
        for j in range(nd):
            if scores[dt0 + j] < thresh:
                below[j] = True
    tp = 0
    fp = 0
    fn = 0
    similarity = 0.0
    deltas = np.zeros(ng, dtype=np.float64)
    n_delta = 0
    for i in range(ng):
        gi = ign_gt[gt0 + i]
        if gi == -1:
            continue
        det_idx = -1
        valid = _NO_DETECTION
        max_overlap = 0.0
        assigned_ignored = False
        for j in range(nd):
            dj = ign_dt[dt0 + j]
            if dj == -1 or assigned[j] or below[j]:
                continue
            overlap = ov[ov_start + j * ng + i]
            score = scores[dt0 + j]
            if not compute_fp:
                if overlap > min_overlap and score > valid:
                    det_idx = j
                    valid = score
            elif overlap > min_overlap and (overlap > max_overlap or assigned_ignored) and dj == 0:
                max_overlap = overlap
                det_idx = j
                valid = 1.0
                assigned_ignored = False
            elif overlap > min_overlap and valid == _NO_DETECTION and dj == 1:
                det_idx = j
                valid = 1.0
                assigned_ignored = True
        if valid == _NO_DETECTION:
            if gi == 0:
                fn += 1
        elif gi == 1 or ign_dt[dt0 + det_idx] == 1:
            assigned[det_idx] = True
        else:
            tp += 1
            tp_scores[n_tp] = scores[dt0 + det_idx]
            n_tp += 1
            if compute_aos:
                deltas[n_delta] = gt_alpha[gt0 + i] - dt_alpha[dt0 + det_idx]
                n_delta += 1
            assigned[det_idx] = True
    if compute_fp:
        for j in range(nd):
            dj = ign_dt[dt0 + j]
            if not (assigned[j] or dj == -1 or dj == 1 or below[j]):
                fp += 1
        nstuff = 0
        for k in range(ndc):
            for j in range(nd):
                dj = ign_dt[dt0 + j]
                if assigned[j] or dj == -1 or dj == 1 or below[j]:
                    continue
                if dcov[dcov_start + j * ndc + k] > min_overlap:
                    assigned[j] = True
                    nstuff += 1
        fp -= nstuff
        if compute_aos:
            if tp > 0 or fp > 0:
                for k in range(n_delta):
                    similarity += (1.0 + np.cos(deltas[k])) / 2.0
            else:
                similarity = -1.0
    return tp, fp, fn, similarity, n_tp


@jit
def collect_tp_scores(ov, ov_off, gt_off, dt_off, ign_gt, ign_dt, scores, gt_alpha, dt_alpha,
                      dcov, dcov_off, dc_num, min_overlap):
    """First pass over all frames: the scores of the true positives (score-greedy matching)."""
    n_frames = gt_off.shape[0] - 1
    out = np.zeros(gt_off[n_frames] - gt_off[0], dtype=np.float64)
    n_tp = 0
    for f in range(n_frames):
        ng = gt_off[f + 1] - gt_off[f]
        nd = dt_off[f + 1] - dt_off[f]
        res = match_frame(ov, ov_off[f], ng, nd, gt_off[f], dt_off[f], ign_gt, ign_dt, scores,
                          gt_alpha, dt_alpha, dcov, dcov_off[f], dc_num[f], min_overlap, 0.0,
                          False, False, out, n_tp)
        n_tp = res[4]
    return out[:n_tp]


@jit
def _search_right(sorted_values, value):
    """Index of the first element > value in an ascending array (numpy's searchsorted side='right')."""
    lo = 0
    hi = sorted_values.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_values[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def accumulate_pr(thresholds_asc, ov, ov_off, gt_off, dt_off, ign_gt, ign_dt, scores, gt_alpha,
                  dt_alpha, dcov, dcov_off, dc_num, min_overlap, compute_aos):
    """tp, fp, fn (int64) and AOS similarity (float64) at each threshold of an ascending array."""
    n_thr = thresholds_asc.shape[0]
    d_tp = np.zeros(n_thr + 1, dtype=np.int64)
    d_fp = np.zeros(n_thr + 1, dtype=np.int64)
    d_fn = np.zeros(n_thr + 1, dtype=np.int64)
    d_sim = np.zeros(n_thr + 1, dtype=np.float64)
    n_frames = gt_off.shape[0] - 1
    max_gt = 0
    for f in range(n_frames):
        if gt_off[f + 1] - gt_off[f] > max_gt:
            max_gt = gt_off[f + 1] - gt_off[f]
    scratch = np.zeros(max_gt + 1, dtype=np.float64)
    for f in range(n_frames):
        ng = gt_off[f + 1] - gt_off[f]
        nd = dt_off[f + 1] - dt_off[f]
        # distinct scores of the detections that take part (class or ignored), descending
        n_rel = 0
        rel = np.empty(nd, dtype=np.float64)
        for j in range(nd):
            if ign_dt[dt_off[f] + j] != -1:
                rel[n_rel] = scores[dt_off[f] + j]
                n_rel += 1
        asc = np.sort(rel[:n_rel])
        levels = np.empty(n_rel, dtype=np.float64)
        n_lev = 0
        for j in range(n_rel - 1, -1, -1):
            if n_lev == 0 or asc[j] != levels[n_lev - 1]:
                levels[n_lev] = asc[j]
                n_lev += 1
        # level k < n_lev: detections with score >= levels[k] active, for t in (levels[k+1], levels[k]];
        # level n_lev: nothing active, for t > levels[0]
        for k in range(n_lev + 1):
            if k == n_lev:
                thresh = np.inf
                lo = _search_right(thresholds_asc, levels[0]) if n_lev > 0 else 0
                hi = n_thr
            else:
                thresh = levels[k]
                lo = _search_right(thresholds_asc, levels[k + 1]) if k + 1 < n_lev else 0
                hi = _search_right(thresholds_asc, levels[k])
            if lo >= hi:
                continue
            tp, fp, fn, sim, _ = match_frame(ov, ov_off[f], ng, nd, gt_off[f], dt_off[f], ign_gt,
                                             ign_dt, scores, gt_alpha, dt_alpha, dcov, dcov_off[f],
                                             dc_num[f], min_overlap, thresh, True, compute_aos,
                                             scratch, 0)
            d_tp[lo] += tp
            d_tp[hi] -= tp
            d_fp[lo] += fp
            d_fp[hi] -= fp
            d_fn[lo] += fn
            d_fn[hi] -= fn
            if sim != -1.0:
                d_sim[lo] += sim
                d_sim[hi] -= sim
    tp_out = np.cumsum(d_tp)[:n_thr]
    fp_out = np.cumsum(d_fp)[:n_thr]
    fn_out = np.cumsum(d_fn)[:n_thr]
    sim_out = np.cumsum(d_sim)[:n_thr]
    return tp_out, fp_out, fn_out, sim_out
