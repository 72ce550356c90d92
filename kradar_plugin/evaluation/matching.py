"""Matching, the rules behind the evaluation engine (``engine``): which GT and detections count for a class and
difficulty column (:func:`ignore_codes`), the plan of curves of a protocol (:func:`plan_curves`), the frame
rule (:func:`frames_kept`), the per-pair inputs of the matching kernel (:func:`match_inputs`), the thread-pool
driver (:func:`run_tasks`), and the score-threshold rule of each protocol as ONE table entry
(:data:`CURVE_RULES`: ``kitti41`` reads 41 thresholds picked from the TP scores, ``every_score`` the exact
envelope at every score).
"""
import collections
import os

import numpy as np

from .. import settings
from . import _jit
from . import ap as ap_mod
from . import geometry
from . import statistics
from .protocols import FAKE_2D_BOX, KITTI_MAX_OCCLUSION, KITTI_MAX_TRUNCATION, KITTI_MIN_HEIGHT

METRICS = ('bbox', 'bev', '3d')

CurvePlan = collections.namedtuple('CurvePlan', 'metrics compute_aos ignores same_as n_curves')
CurvePlan.__doc__ = ("The curves of one protocol: ``metrics`` evaluated, ``compute_aos``, ``ignores`` {(class, "
                     "column): (ign_gt, ign_dt)}, ``same_as`` {(class, column): identical earlier column}, and "
                     "``n_curves`` to compute.")
Task = collections.namedtuple('Task', 'metric cls column iou')
Task.__doc__ = 'One curve: metric name, class index, difficulty column index, IoU threshold index.'
MatchInputs = collections.namedtuple('MatchInputs', 'ov ov_off gt_off dt_off scores gt_alpha dt_alpha dc_hits')
MatchInputs.__doc__ = ("What ``statistics.events_for`` reads for one metric: per-pair overlaps and offsets, frame "
                       "offsets, scores, alphas and the DontCare test ``dc_hits(min_overlap)``.")


def ignore_codes(frames, cls, column, protocol):
    """KITTI ignore codes (0 counted, 1 ignored, -1 other class) of GT and detections for one class and
    one difficulty column."""
    gt, dt = frames.gt, frames.dt
    similar = [b for a, b in protocol.similar_classes if a.lower() == cls.lower()]
    neighbours = [c for name in similar for c in frames.codes_of(name)]
    gt_valid = np.where(np.isin(gt['code'], frames.codes_of(cls)), 1, -1)
    if neighbours:
        gt_valid[(gt_valid == -1) & np.isin(gt['code'], neighbours)] = 0
    dt_valid = np.isin(dt['code'], frames.codes_of(cls))
    if protocol.difficulty == 'kitti':
        height = gt['bbox'][:, 3] - gt['bbox'][:, 1]
        gt_out = ((gt['occluded'] > KITTI_MAX_OCCLUSION[column]) |
                  (gt['truncated'] > KITTI_MAX_TRUNCATION[column]) |
                  (height <= KITTI_MIN_HEIGHT[column]))
        dt_height = np.abs(dt['bbox'][:, 3] - dt['bbox'][:, 1])
        ign_dt = np.where(dt_height < KITTI_MIN_HEIGHT[column], 1, np.where(dt_valid, 0, -1))
    else:
        if column == 0:
            gt_out = np.zeros(len(gt_valid), dtype=bool)
            dt_out = np.zeros(len(dt_valid), dtype=bool)
        else:
            lo, hi = protocol.distance_edges[column - 1], protocol.distance_edges[column]
            last = column == len(protocol.distance_edges) - 1
            gt_out = ~in_distance_bin(gt['location'], lo, hi, last)
            dt_out = ~in_distance_bin(dt['location'], lo, hi, last)
        ign_dt = np.where(dt_valid, np.where(dt_out, 1, 0), -1)
    ign_gt = np.where((gt_valid == 1) & ~gt_out, 0, np.where((gt_valid == 0) | ((gt_valid == 1) & gt_out), 1, -1))
    return ign_gt.astype(np.int64), ign_dt.astype(np.int64)


def in_distance_bin(location, lo, hi, last):
    """BEV distance from the sensor (location is (y, z, x)) in [lo, hi), the last bin closed at hi."""
    dist = np.hypot(location[:, 0], location[:, 2])
    return (dist >= lo) & ((dist <= hi) if last else (dist < hi))


def dontcare_hits_of(frames, metric):
    """``dc_hits(min_overlap)``: per detection, does it overlap a DontCare box of its frame (criterion 0,
    2D metric only: always False otherwise)."""
    n = frames.n_frames
    n_dt = len(frames.dt['score'])
    is_dc = np.isin(frames.gt['code'], frames.codes_of('DontCare', case_sensitive=True))
    if metric != 'bbox' or not is_dc.any():
        none = np.zeros(n_dt, dtype=np.bool_)
        return lambda min_overlap: none
    dc_rows = np.nonzero(is_dc)[0]
    dc_frame = np.searchsorted(frames.gt_off, dc_rows, side='right') - 1
    dc_num = np.bincount(dc_frame, minlength=n).astype(np.int64)
    dc_off = np.zeros(n + 1, dtype=np.int64)
    dc_off[1:] = np.cumsum(dc_num)
    dc_pairs = geometry.FramePairs(frames.dt_off, dc_off)
    ov = geometry.image_overlap(frames.dt['bbox'][dc_pairs.dt], frames.gt['bbox'][dc_rows][dc_pairs.gt], 0)
    return lambda min_overlap: statistics.dontcare_hits(n_dt, ov, dc_pairs, min_overlap)


def plan_curves(proto, frames, classes, eval_types):
    """The :class:`CurvePlan` of one protocol on checked frames."""
    metrics = [m for m in METRICS if m in eval_types]
    if 'bbox' in metrics and proto.bbox_2d == 'if_real':   # EchoFusion's fake 2D boxes carry no information
        boxes = np.concatenate([frames.gt['bbox'], frames.dt['bbox']], axis=0)
        if len(boxes) == 0 or bool(np.all(boxes == np.asarray(FAKE_2D_BOX))):
            metrics.remove('bbox')
    # the legacy AOS switch: some detection alpha != -10 and some frame's first GT alpha != -10
    starts = frames.gt_off[:-1][np.diff(frames.gt_off) > 0]
    compute_aos = ('bbox' in metrics and bool(np.any(frames.dt['alpha'] != -10)) and len(starts) > 0
                   and bool(np.any(frames.gt['alpha'][starts] != -10)))
    columns = proto.column_labels()
    ignores = {}
    for c, cls in enumerate(classes):
        for k in range(len(columns)):
            ignores[(c, k)] = ignore_codes(frames, cls, k, proto)
    # identical ignore codes (the dead KITTI columns on K-Radar) give identical numbers: evaluate once
    same_as = {}
    for c in range(len(classes)):
        for k in range(len(columns)):
            for j in range(k):
                if same_as.get((c, j), j) == j and all(np.array_equal(a, b) for a, b in
                                                       zip(ignores[(c, k)], ignores[(c, j)])):
                    same_as[(c, k)] = j
                    break
    n_curves = len(metrics) * len(proto.iou_thresholds) * (len(classes) * len(columns) - len(same_as))
    return CurvePlan(metrics, compute_aos, ignores, same_as, n_curves)


def worker_threads():
    """Worker threads for the curves: ``KRADAR_EVAL_THREADS`` (a positive integer; anything else is an error
    naming the variable), else up to 4 (the compiled kernels release the GIL, so the curves of one evaluation
    run side by side)."""
    value = settings.positive_int(settings.EVAL_THREADS)
    return max(1, min(4, os.cpu_count() or 1)) if value is None else value


def frames_kept(frames, classes, proto):
    """The frame rule, in one place: which frames an evaluation of ``classes`` keeps (bool per frame).
    Protocols with ``drop_frames_without_gt`` (legacy, kradar, revised, as K-Radar's pipeline and EchoFusion's
    ``format_anno`` do) drop frames without GT of the evaluated classes, with their detections; ``fixed`` keeps
    every frame (their detections are false positives)."""
    if not proto.drop_frames_without_gt:
        return np.ones(frames.n_frames, dtype=bool)
    # a frame holding no GT of ``classes``: K-Radar's pipeline writes no file for a frame whose label, after its
    # class and region filter, is empty; EchoFusion's format_anno drops it. GT of other classes do not count.
    codes = [code for cls in classes for code in frames.codes_of(cls)]
    rows = np.isin(frames.gt['code'], codes)
    gt_frame = np.repeat(np.arange(frames.n_frames, dtype=np.int64), np.diff(frames.gt_off))
    return np.bincount(gt_frame[rows], minlength=frames.n_frames) > 0


def match_inputs(prepared, metric, proto):
    """The :class:`MatchInputs` of a prepared set for one metric (overlaps from its cache)."""
    frames = prepared.frames
    return MatchInputs(prepared.overlaps(metric, proto), prepared.pairs.ov_off, frames.gt_off, frames.dt_off,
                       prepared.scores, prepared.gt_alpha, prepared.dt_alpha, dontcare_hits_of(frames, metric))


def run_tasks(tasks, run, done):
    """``done(task, run(task))`` for each task, in order: the first alone (it compiles or loads the kernels),
    the others in ``worker_threads()`` threads when numba runs them (its kernels release the GIL), at most
    two per thread ahead of ``done``, so that outputs ``done`` does not keep are freed as they are read."""
    if not tasks:
        return
    done(tasks[0], run(tasks[0]))
    threads = min(worker_threads(), len(tasks) - 1) if _jit.mode()[0] == 'numba' else 1
    if threads <= 1:
        for task in tasks[1:]:
            done(task, run(task))
        return
    from concurrent.futures import ThreadPoolExecutor
    todo = collections.deque(tasks[1:])
    pending = collections.deque()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        while todo or pending:
            while todo and len(pending) < 2 * threads:
                task = todo.popleft()
                pending.append((task, pool.submit(run, task)))
            task, future = pending.popleft()
            done(task, future.result())


class _Kitti41(object):
    """41 score thresholds picked from the TP scores (KITTI's, K-Radar's eval.py / eval_revised.py)."""
    first_pass = True          # the matching records the TP scores the thresholds are picked from
    reads_takes_part = False

    @staticmethod
    def event_columns(compute_aos):
        return 4 if compute_aos else 3      # the similarity column only serves AOS

    @staticmethod
    def selection(selected):
        """What :meth:`of_selection` reads of a selection's events (rows in descending score order)."""
        cum = np.zeros((len(selected) + 1, selected.shape[1]), dtype=np.float64)
        np.cumsum(selected, axis=0, out=cum[1:])
        return cum

    @staticmethod
    def of_selection(proto, cum, keep, num_gt, tp_scores, desc, takes_part, compute_aos):
        """(AP, AOS or None, points) of a selection at the thresholds picked from its ``tp_scores``; points:
        (thresholds, recall, precision, curve recall, curve precision)."""
        thresholds = ap_mod.get_thresholds(tp_scores, num_gt)
        at = cum[np.searchsorted(-desc, -thresholds, side='right')]
        tp, fp = at[:, 0], at[:, 1]
        fn = at[:, 2] + num_gt
        precision = ap_mod.ratios(tp, tp + fp)
        recall = ap_mod.ratios(tp, tp + fn)
        orientation = ap_mod.ratios(at[:, 3], tp + fp) if compute_aos else precision
        value, aos, curve_recall, curve_precision = ap_mod.curve_ap(proto.interpolation, recall, precision,
                                                                    orientation, None, compute_aos)
        return value, aos, (thresholds, recall, precision, curve_recall, curve_precision)


class _EveryScore(object):
    """Every score of a detection that takes part, with the exact precision envelope (``fixed``)."""
    first_pass = False
    reads_takes_part = True    # which detections of a selection take part in the curve

    @staticmethod
    def event_columns(compute_aos):
        return 4                # the envelope reads all four columns

    @staticmethod
    def selection(selected):
        return selected

    @staticmethod
    def of_selection(proto, selected, keep, num_gt, tp_scores, desc, takes_part, compute_aos):
        events = selected[:keep]
        if events.shape[1] < 4:
            events = np.concatenate([events, np.zeros((len(events), 1))], axis=1)
        (thresholds, recall, precision, orientation), best_p, best_o = statistics.envelope(
            events, num_gt, takes_part[:keep], desc[:keep], ap_mod.CURVE_POSITIONS)
        value, aos, curve_recall, curve_precision = ap_mod.curve_ap(proto.interpolation, recall, precision,
                                                                    orientation, (best_p, best_o), compute_aos)
        return value, aos, (thresholds, recall, precision, curve_recall, curve_precision)


#: the score-threshold rule of each ``Protocol.threshold_selection``
CURVE_RULES = {'kitti41': _Kitti41(), 'every_score': _EveryScore()}

