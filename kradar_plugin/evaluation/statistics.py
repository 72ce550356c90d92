"""KITTI-style matching statistics over all frames: one matching pass per frame in score order, then one
cumulative pass over the globally sorted detections (numba-compiled when available, see ``_jit``).

Inputs are flat arrays with per-frame offsets, so a whole data set is one call:

* ``gt_off``, ``dt_off`` (F + 1,) int64: frame ``f`` owns GT ``gt_off[f]:gt_off[f+1]`` and detections
  ``dt_off[f]:dt_off[f+1]``;
* ``ov`` flat float64 and ``ov_off`` (F,): frame ``f``'s overlap block (rows: detections, columns: GT)
  starts at ``ov_off[f]``;
* ``ign_gt`` / ``ign_dt`` int64: 0 counted, 1 ignored (may match without counting), -1 other class;
* ``dc_hit`` bool: the detection overlaps a DontCare box above the IoU threshold (2D metric only);
* ``order`` / ``rank``: the score orders of :class:`ScoreOrder`.

Matching rules are the KITTI ones the legacy evaluators use. A first pass picks for each GT, in GT order,
the highest-scoring unassigned detection above the IoU threshold and yields the true-positive scores
(from which ``kitti41`` protocols pick their 41 score thresholds). At a score threshold ``t`` (detections
with a lower score take no part) a second pass picks for each GT the highest-overlap detection, counted
ones before ignored ones; unassigned counted detections are false positives unless they overlap a
DontCare box.

A frame's counts depend on ``t`` only through the set of its detections with score >= t, which grows one
score level at a time as ``t`` falls. :func:`frame_events` walks each frame's levels once, in descending
score order, and records how tp / fp / fn / AOS similarity change at each level. A newly active
detection that overlaps no GT above the IoU threshold can never be assigned: it only adds a false
positive. One that overlaps a single GT which had no detection changes that GT alone (later GTs never
saw it). Only otherwise is the frame matched again. The evaluation engine (``engine``: 41 KITTI
thresholds) and :func:`envelope` (every score) then sum these changes over the detections sorted by
descending score and read the totals at each threshold. The counts equal a direct re-matching of every
frame at every threshold (the legacy evaluators' ``fused_compute_statistics``), at a cost independent of
the number of thresholds.
"""
import numpy as np

from . import _jit
from ._jit import jit


@jit
def frame_events(ov, ov_off, gt_off, dt_off, order, rank, ign_gt, ign_dt, scores, gt_alpha, dt_alpha, dc_hit,
                 min_overlap, compute_aos, first_pass, events, tp_scores, tp_frame, active, assigned, n_cand,
                 first_cand, gt_match):
    """Fill ``events`` (one row per detection in global score order: the changes of tp, fp, fn and
    similarity at each frame's first detection of a score level; one row keeps the four in one cache
    line) and the first-pass TP scores with their frames (``tp_frame``); returns (number of TP scores, fn
    with no detection active).

    One matching routine serves both passes (``by_score``): the first pass lets every detection take
    part and each GT (in order) take the highest-scoring free detection above the IoU threshold; the
    threshold pass lets the active detections take part and each GT take the highest-overlap one,
    counted detections before ignored ones. (One copy of the routine keeps numba's compile time short.)
    ``active``, ``assigned``, ``n_cand``, ``first_cand`` (the most detections of a frame) and
    ``gt_match`` (the most GT of a frame) are scratch space.
    """
    n_frames = gt_off.shape[0] - 1
    n_tp = 0
    base_fn = 0
    for f in range(n_frames):
        g0 = gt_off[f]
        d0 = dt_off[f]
        ng = gt_off[f + 1] - g0
        nd = dt_off[f + 1] - d0
        o0 = ov_off[f]
        fn = 0
        for i in range(ng):
            gt_match[i] = -1
            if ign_gt[g0 + i] == 0:
                fn += 1
        base_fn += fn
        if nd == 0:
            continue
        # a detection can only ever be assigned to a GT it overlaps above the threshold
        for j in range(nd):
            active[j] = False
            n_cand[j] = 0
            first_cand[j] = -1
            if ign_dt[d0 + j] == -1:
                continue
            for i in range(ng):
                if ov[o0 + j * ng + i] > min_overlap and ign_gt[g0 + i] != -1:
                    n_cand[j] += 1
                    if first_cand[j] == -1:
                        first_cand[j] = i
        tp = 0
        fp = 0
        similarity = 0.0
        by_score = first_pass
        k = 0
        while True:
            first = -1
            n_new = 0
            new = -1
            add_fp = 0
            if not by_score:
                # activate the next score level
                while first == -1 and k < nd:
                    level = scores[order[d0 + k]]
                    while k < nd and scores[order[d0 + k]] == level:
                        j = order[d0 + k] - d0
                        k += 1
                        if ign_dt[d0 + j] == -1:
                            continue
                        active[j] = True
                        if first == -1:
                            first = j
                        if n_cand[j] > 0:
                            n_new += 1
                            new = j
                        elif ign_dt[d0 + j] == 0 and not dc_hit[d0 + j]:
                            add_fp += 1
                if first == -1:
                    break
            ntp, nfp, nfn, nsim = tp, fp + add_fp, fn, similarity
            if not by_score and n_new == 1 and n_cand[new] == 1 and gt_match[first_cand[new]] == -1:
                # the one new candidate overlaps one GT, which had no detection: only that GT changes
                # (it takes the new detection; later GTs never saw it, so their choices stay the same)
                i = first_cand[new]
                gt_match[i] = new
                assigned[new] = True
                if ign_gt[g0 + i] == 0:
                    nfn -= 1
                    if ign_dt[d0 + new] == 0:
                        ntp += 1
                        if compute_aos:
                            nsim += (1.0 + np.cos(gt_alpha[g0 + i] - dt_alpha[d0 + new])) / 2.0
            elif by_score or n_new > 0:
                # match the frame again
                ntp = 0
                nfn = 0
                nsim = 0.0
                for j in range(nd):
                    assigned[j] = False
                for i in range(ng):
                    gt_match[i] = -1
                    gi = ign_gt[g0 + i]
                    if gi == -1:
                        continue
                    det = -1
                    best = -10000000.0
                    ignored = False
                    for j in range(nd):
                        dj = ign_dt[d0 + j]
                        if assigned[j] or dj == -1 or not (by_score or active[j]):
                            continue
                        overlap = ov[o0 + j * ng + i]
                        if overlap <= min_overlap:
                            continue
                        if by_score:
                            if scores[d0 + j] > best:
                                det = j
                                best = scores[d0 + j]
                        elif dj == 0 and (overlap > best or ignored):
                            det = j
                            best = overlap
                            ignored = False
                        elif dj == 1 and det == -1:
                            det = j
                            ignored = True
                    if det == -1:
                        if gi == 0:
                            nfn += 1
                        continue
                    assigned[det] = True
                    gt_match[i] = det
                    if gi == 0 and ign_dt[d0 + det] == 0:
                        ntp += 1
                        if by_score:
                            tp_scores[n_tp] = scores[d0 + det]
                            tp_frame[n_tp] = f
                            n_tp += 1
                        elif compute_aos:
                            nsim += (1.0 + np.cos(gt_alpha[g0 + i] - dt_alpha[d0 + det])) / 2.0
                nfp = 0
                for j in range(nd):
                    if active[j] and not assigned[j] and ign_dt[d0 + j] == 0 and not dc_hit[d0 + j]:
                        nfp += 1
            if by_score:
                # first pass done: the threshold pass starts with nothing active
                by_score = False
                for i in range(ng):
                    gt_match[i] = -1
                for j in range(nd):
                    assigned[j] = False
                continue
            g = rank[d0 + first]
            events[g, 0] = ntp - tp
            events[g, 1] = nfp - fp
            events[g, 2] = nfn - fn
            events[g, 3] = nsim - similarity
            tp, fp, fn, similarity = ntp, nfp, nfn, nsim
    return n_tp, base_fn


class ScoreOrder(object):
    """Detection orders shared by every curve of one evaluation: ``glob`` (all detections by descending
    score, stable), ``rank`` (each detection's position in ``glob``), the sorted scores ``desc`` and
    ``in_frame`` (each frame's detections by descending score, frames in order)."""

    def __init__(self, scores, dt_off):
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        n = len(scores)
        self.glob = np.argsort(-scores, kind='stable').astype(np.int64)
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[self.glob] = np.arange(n, dtype=np.int64)
        self.desc = scores[self.glob]
        frame = np.repeat(np.arange(len(dt_off) - 1, dtype=np.int64), np.diff(dt_off))
        self.in_frame = np.argsort(frame * max(n, 1) + self.rank).astype(np.int64)


def dontcare_hits(n_dt, dcov, dc_pairs, min_overlap):
    """Per detection: does it overlap some DontCare box of its frame above ``min_overlap``."""
    hit = np.zeros(n_dt, dtype=np.bool_)
    if len(dcov):
        hit[dc_pairs.indices(np.flatnonzero(dcov > min_overlap))[0]] = True
    return hit


@jit
def _every_score_kernel(events, base_fn, takes_part, desc, positions, thresholds, recall, precision, orientation,
                        top_precision, top_orientation):
    """Walk the detections by descending score; at the end of each score level with a detection that
    takes part (a threshold) record recall, precision and orientation similarity / (tp + fp), and keep
    for each recall position the best precision (and orientation) of the thresholds whose recall
    reaches it first. Returns the number of thresholds."""
    n = desc.shape[0]
    n_pos = positions.shape[0]
    a_tp = 0.0
    a_fp = 0.0
    a_fn = base_fn
    a_sim = 0.0
    part = False
    n_thr = 0
    for p in range(n):
        a_tp += events[p, 0]
        a_fp += events[p, 1]
        a_fn += events[p, 2]
        a_sim += events[p, 3]
        if takes_part[p]:
            part = True
        if p + 1 < n and desc[p + 1] == desc[p]:
            continue
        if not part:
            continue
        part = False
        rec = a_tp / (a_tp + a_fn) if a_tp + a_fn > 0 else 0.0
        prec = a_tp / (a_tp + a_fp) if a_tp + a_fp > 0 else 0.0
        orient = a_sim / (a_tp + a_fp) if a_tp + a_fp > 0 else 0.0
        thresholds[n_thr] = desc[p]
        recall[n_thr] = rec
        precision[n_thr] = prec
        orientation[n_thr] = orient
        n_thr += 1
        lo = 0          # number of recall positions <= rec
        hi = n_pos
        while lo < hi:
            mid = (lo + hi) // 2
            if positions[mid] <= rec:
                lo = mid + 1
            else:
                hi = mid
        if lo > 0:
            if prec > top_precision[lo - 1]:
                top_precision[lo - 1] = prec
            if orient > top_orientation[lo - 1]:
                top_orientation[lo - 1] = orient
    return n_thr


def envelope(events, base_fn, takes_part, desc, positions):
    """The exact precision-recall envelope over every score of a detection that takes part: (thresholds
    descending; recall, precision and orientation similarity / (tp + fp) at each) and the interpolated
    precision / orientation at ``positions`` (max over the thresholds whose recall reaches each), from the
    events of detections in descending score order (``desc``), those that take part flagged in ``takes_part``
    (any selection of a set's rows in its global order)."""
    thresholds, recall, precision, orientation = (np.zeros(len(desc)) for _ in range(4))
    top_p, top_o = np.zeros(len(positions)), np.zeros(len(positions))
    n_thr = _jit.call(_every_score_kernel, np.ascontiguousarray(events, dtype=np.float64), float(base_fn),
                      np.ascontiguousarray(takes_part, dtype=np.bool_), np.ascontiguousarray(desc, dtype=np.float64),
                      np.ascontiguousarray(positions, dtype=np.float64), thresholds, recall, precision, orientation,
                      top_p, top_o)
    best_p = np.maximum.accumulate(top_p[::-1])[::-1]
    best_o = np.maximum.accumulate(top_o[::-1])[::-1]
    return (thresholds[:n_thr], recall[:n_thr], precision[:n_thr], orientation[:n_thr]), best_p, best_o


def events_for(args, ign_gt, ign_dt, order, min_overlap, compute_aos, first_pass):
    """Run :func:`frame_events` for one class / column / metric / IoU threshold.

    ``args`` = (ov, ov_off, gt_off, dt_off, scores, gt_alpha, dt_alpha, dc_hits) with ``dc_hits(min_overlap)``
    giving :func:`dontcare_hits`. Returns (events (n, 4) in global score order, tp_scores, the frame of each
    TP score)."""
    ov, ov_off, gt_off, dt_off, scores, gt_alpha, dt_alpha, dc_hits = args
    events = np.zeros((len(scores), 4), dtype=np.float64)
    tp_scores = np.zeros(max(len(ign_gt), 1) if first_pass else 1, dtype=np.float64)
    tp_frame = np.zeros(len(tp_scores), dtype=np.int64)
    max_nd = max(int(np.max(np.diff(dt_off))) if len(dt_off) > 1 else 1, 1)
    max_ng = max(int(np.max(np.diff(gt_off))) if len(gt_off) > 1 else 1, 1)
    n_tp, _ = _jit.call(frame_events, ov, ov_off, gt_off, dt_off, order.in_frame, order.rank, ign_gt, ign_dt,
                              scores, gt_alpha, dt_alpha, dc_hits(min_overlap), float(min_overlap),
                              bool(compute_aos), bool(first_pass), events, tp_scores, tp_frame,
                              np.zeros(max_nd, dtype=np.bool_), np.zeros(max_nd, dtype=np.bool_),
                              np.zeros(max_nd, dtype=np.int64), np.zeros(max_nd, dtype=np.int64),
                              np.zeros(max_ng, dtype=np.int64))
    return events, tp_scores[:n_tp], tp_frame[:n_tp]
