"""AP of any selection of frames, at any confidence threshold, from matching done once.

KITTI matching is per frame: a frame's matches, and so its changes of tp / fp / fn / similarity at each
score level (``statistics.frame_events``), do not depend on the other frames. :class:`EventTable` runs the
matching once over a prepared set for each class, difficulty column, metric and IoU threshold; the AP of a
group of frames (a weather, a road type, a bootstrap draw that repeats sequences) is then read from the
events of the group's detections, each weighted by how often its frame is drawn.

A confidence threshold T (K-Radar keeps ``score > T``) needs no new matching either. The first pass gives
each GT, in order, the highest-scoring free detection: dropping every detection scoring <= T drops exactly
the TP scores <= T and changes no assignment of a higher one. The threshold pass at a score threshold t
reads only the detections scoring >= t, and every such t (a TP score) lies above T. The detections above T
are the first rows of the global score order.
"""
import numpy as np

from . import _jit
from . import ap as ap_mod
from . import report, statistics
from .kradar_eval import Evaluation, _dontcare, _plan, _threads
from .subset import frames_with_gt


class EventTable(object):
    """Matching events of one protocol on one prepared set (``kradar_eval._Prepared``): overlaps come from
    the prepared set's cache, so several protocols on the same frames share them."""

    def __init__(self, proto, prepared, classes, eval_types):
        frames = prepared.frames
        self.proto = proto
        self.classes = tuple(classes)
        self.metrics, self.compute_aos, ignores, self.same_as, _ = _plan(proto, frames, classes, eval_types)
        self.columns = proto.column_labels()
        self.n_frames = n = frames.n_frames
        order = prepared.order
        self.desc = order.desc
        dt_frame = np.repeat(np.arange(n, dtype=np.int64), np.diff(frames.dt_off))
        self.glob_frame = dt_frame[order.glob]          # frame of each detection, in global score order
        gt_frame = np.repeat(np.arange(n, dtype=np.int64), np.diff(frames.gt_off))
        self.has_gt = frames_with_gt(frames, classes)
        self.gt_per_frame = {}
        self.takes_part = {}
        for key, (ign_gt, ign_dt) in ignores.items():
            self.gt_per_frame[key] = np.bincount(gt_frame[ign_gt == 0], minlength=n).astype(np.int64)
            self.takes_part[key] = np.ascontiguousarray(ign_dt[order.glob] != -1)
        kitti = proto.threshold_selection == 'kitti41'
        tasks = [(metric, c, k, i) for metric in self.metrics for (c, k) in sorted(ignores)
                 if (c, k) not in self.same_as for i in range(len(proto.iou_thresholds))]
        args = {}
        for metric in self.metrics:
            args[metric] = (prepared.overlaps(metric, proto), prepared.pairs.ov_off, frames.gt_off,
                            frames.dt_off, prepared.scores, prepared.gt_alpha, prepared.dt_alpha,
                            _dontcare(frames, metric))

        def run(task):
            metric, c, k, i = task
            ign_gt, ign_dt = ignores[(c, k)]
            (events, _), tp_scores, tp_frame = statistics.events_for(
                args[metric], ign_gt, ign_dt, order, float(proto.iou_thresholds[i]),
                metric == 'bbox' and self.compute_aos, kitti, with_frames=True)
            return events, tp_scores, tp_frame

        self.events = {}
        if tasks:
            self.events[tasks[0]] = run(tasks[0])      # compiles (or loads) the kernels once
        threads = min(_threads(), len(tasks) - 1) if _jit.mode()[0] == 'numba' else 1
        if threads > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(max_workers=threads) as pool:
                for task, out in zip(tasks[1:], pool.map(run, tasks[1:])):
                    self.events[task] = out
        else:
            for task in tasks[1:]:
                self.events[task] = run(task)

    def frame_weights(self, frame_idx, frame_rule=True):
        """How often each frame is drawn (int64, one per frame) for the frames ``frame_idx`` (repeats
        allowed); with ``frame_rule``, frames without GT get 0 where the protocol drops them."""
        weights = np.bincount(np.asarray(frame_idx, dtype=np.int64), minlength=self.n_frames).astype(np.int64)
        if frame_rule and self.proto.drop_frames_without_gt:
            weights[~self.has_gt] = 0
        return weights

    def evaluate(self, weights, score_threshold=None):
        """An :class:`~kradar_plugin.evaluation.kradar_eval.Evaluation` (AP, AOS and GT counts; no curves)
        of the frames weighted by ``weights``, keeping the detections with ``score > score_threshold``."""
        weights = np.asarray(weights, dtype=np.int64)
        n_keep = len(self.desc) if score_threshold is None else int(
            np.searchsorted(-self.desc, -float(score_threshold), side='left'))
        w_glob = weights[self.glob_frame[:n_keep]]
        rows = np.flatnonzero(w_glob)
        row_w = w_glob[rows]
        row_w = None if bool(np.all(row_w == 1)) else row_w.astype(np.float64)[:, None]
        desc = self.desc[rows]
        cols = 4 if self.compute_aos else 3       # the similarity column only serves AOS
        proto, classes = self.proto, self.classes
        n_iou = len(proto.iou_thresholds)
        result = Evaluation(proto, classes, tuple(self.metrics), self.columns, int(weights.sum()))
        num_gt = {}
        for (c, k), per_frame in self.gt_per_frame.items():
            num_gt[(c, k)] = int(np.dot(weights, per_frame))
            result.num_gt[(classes[c], k)] = num_gt[(c, k)]
        compute_aos = self.compute_aos and 'bbox' in self.metrics
        if compute_aos:
            result.aos = np.zeros((len(classes), len(self.columns), n_iou))
        for metric in self.metrics:
            result.ap[metric] = np.zeros((len(classes), len(self.columns), n_iou))
        for (metric, c, k, i), (events, tp_scores, tp_frame) in self.events.items():
            tp_w = weights[tp_frame]
            if score_threshold is not None:
                tp_w = np.where(tp_scores > float(score_threshold), tp_w, 0)
            picked = tp_w > 0
            tps = np.repeat(tp_scores[picked], tp_w[picked])
            selected = events[rows, :cols] if row_w is None else events[rows, :cols] * row_w
            value, aos = _curve(proto, selected, num_gt[(c, k)], tps, desc,
                                self.takes_part[(c, k)][:n_keep][rows], metric == 'bbox' and compute_aos)
            result.ap[metric][c, k, i] = value
            if aos is not None:
                result.aos[c, k, i] = aos
        for (c, k), j in self.same_as.items():
            for metric in self.metrics:
                result.ap[metric][c, k] = result.ap[metric][c, j]
            if compute_aos:
                result.aos[c, k] = result.aos[c, j]
        result.ap_dict = report.ap_dict(result)
        return result


def _curve(proto, events, num_gt, tp_scores, desc, takes_part, compute_aos):
    """(AP, AOS or None) of one class / column / metric / IoU threshold from a selection's events."""
    if proto.threshold_selection == 'kitti41':
        thresholds = ap_mod.get_thresholds(tp_scores, num_gt)
        n_ge = np.searchsorted(-desc, -thresholds, side='right')
        cum = np.zeros((len(events) + 1, events.shape[1]), dtype=np.float64)
        np.cumsum(events, axis=0, out=cum[1:])
        at = cum[n_ge]
        tp, fp = at[:, 0], at[:, 1]
        fn = at[:, 2] + num_gt
        precision = ap_mod.ratios(tp, tp + fp)
        recall = ap_mod.ratios(tp, tp + fn)
        orientation = ap_mod.ratios(at[:, 3], tp + fp) if compute_aos else precision
        envelope = None
    else:
        if events.shape[1] < 4:
            events = np.concatenate([events, np.zeros((len(events), 1))], axis=1)
        (_, recall, precision, orientation), best_p, best_o = statistics.envelope(
            events, num_gt, takes_part, desc, ap_mod.CURVE_POSITIONS)
        envelope = (best_p, best_o)
    value, aos, _, _ = ap_mod.curve_ap(proto.interpolation, recall, precision, orientation, envelope,
                                       compute_aos)
    return value, aos


def group_metrics(evaluation):
    """(``--json`` metrics with None where the class has no GT in the group, {class: GT count}).

    A distance bin without GT of a class is None too; ``Overall`` averages the classes that have GT."""
    from .report import json_metrics
    classes = evaluation.classes
    metrics = json_metrics(evaluation)
    gt = dict((cls, int(evaluation.num_gt[(cls, 0)])) for cls in classes)
    columns = dict((label, k) for k, label in enumerate(evaluation.columns))
    for key in list(metrics):
        cls, rest = key.split('/', 1)
        if cls in gt:
            parts = rest.split('/')
            k = columns.get(parts[1], 0) if len(parts) > 1 else 0
            if evaluation.num_gt[(cls, k)] == 0:
                metrics[key] = None
    for key in list(metrics):
        cls, rest = key.split('/', 1)
        if cls == 'Overall' and cls not in gt:
            values = [metrics.get('{}/{}'.format(c, rest)) for c in classes]
            values = [v for v in values if v is not None]
            metrics[key] = float(np.mean(values)) if values else None
    return metrics, gt
