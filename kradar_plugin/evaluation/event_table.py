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
        return self.evaluate_at(weights, [score_threshold])[0]

    def evaluate_at(self, weights, score_thresholds):
        """:meth:`evaluate` at several score thresholds (None: keep all), one Evaluation each. The selection's
        events are gathered and summed once: a threshold T only drops the TP scores <= T (the counts are read
        at TP scores, all above T) and, for every-score protocols, the detections after the first <= T."""
        weights = np.asarray(weights, dtype=np.int64)
        # np.take: several times faster than fancy indexing on these sizes
        w_glob = np.take(weights, self.glob_frame)
        rows = np.flatnonzero(w_glob)
        row_w = np.take(w_glob, rows)
        row_w = None if bool(np.all(row_w == 1)) else row_w.astype(np.float64)[:, None]
        desc = np.take(self.desc, rows)
        n_keep = [len(desc) if t is None else int(np.searchsorted(-desc, -float(t), side='left'))
                  for t in score_thresholds]
        proto, classes = self.proto, self.classes
        kitti = proto.threshold_selection == 'kitti41'
        # the similarity column only serves AOS; the every-score kernel reads all four
        cols = 4 if (self.compute_aos or not kitti) else 3
        shape = (len(classes), len(self.columns), len(proto.iou_thresholds))
        compute_aos = self.compute_aos and 'bbox' in self.metrics
        num_gt = dict((key, int(np.dot(weights, per_frame))) for key, per_frame in self.gt_per_frame.items())
        results = []
        for _ in score_thresholds:
            result = Evaluation(proto, classes, tuple(self.metrics), self.columns, int(weights.sum()))
            for (c, k), count in num_gt.items():
                result.num_gt[(classes[c], k)] = count
            result.aos = np.zeros(shape) if compute_aos else None
            result.ap = dict((metric, np.zeros(shape)) for metric in self.metrics)
            results.append(result)
        takes_part = dict((key, np.take(part, rows)) for key, part in self.takes_part.items()) if not kitti else {}
        for (metric, c, k, i), (events, tp_scores, tp_frame) in self.events.items():
            selected = np.take(events, rows, axis=0)
            if cols < selected.shape[1]:
                selected = selected[:, :cols]
            if row_w is not None:
                selected = selected * row_w
            cum = None
            if kitti:
                cum = np.zeros((len(selected) + 1, cols), dtype=np.float64)
                np.cumsum(selected, axis=0, out=cum[1:])
            tp_w = np.take(weights, tp_frame)
            with_aos = metric == 'bbox' and compute_aos
            for result, threshold, keep in zip(results, score_thresholds, n_keep):
                w = tp_w if threshold is None else np.where(tp_scores > float(threshold), tp_w, 0)
                picked = w > 0
                tps = np.repeat(tp_scores[picked], w[picked])
                if kitti:
                    value, aos = _kitti_curve(proto, cum, num_gt[(c, k)], tps, desc, with_aos)
                else:
                    value, aos = _every_score_curve(proto, selected[:keep], num_gt[(c, k)], desc[:keep],
                                                    takes_part[(c, k)][:keep], with_aos)
                result.ap[metric][c, k, i] = value
                if aos is not None:
                    result.aos[c, k, i] = aos
        for result in results:
            for (c, k), j in self.same_as.items():
                for metric in self.metrics:
                    result.ap[metric][c, k] = result.ap[metric][c, j]
                if compute_aos:
                    result.aos[c, k] = result.aos[c, j]
            result.ap_dict = report.ap_dict(result)
        return results


def _kitti_curve(proto, cum, num_gt, tp_scores, desc, compute_aos):
    """(AP, AOS or None) from the cumulative events of a selection (rows in descending score order) at
    KITTI's 41 thresholds picked from ``tp_scores``."""
    thresholds = ap_mod.get_thresholds(tp_scores, num_gt)
    at = cum[np.searchsorted(-desc, -thresholds, side='right')]
    tp, fp = at[:, 0], at[:, 1]
    fn = at[:, 2] + num_gt
    precision = ap_mod.ratios(tp, tp + fp)
    recall = ap_mod.ratios(tp, tp + fn)
    orientation = ap_mod.ratios(at[:, 3], tp + fp) if compute_aos else precision
    value, aos, _, _ = ap_mod.curve_ap(proto.interpolation, recall, precision, orientation, None, compute_aos)
    return value, aos


def _every_score_curve(proto, events, num_gt, desc, takes_part, compute_aos):
    """(AP, AOS or None) from a selection's events at every score (the exact envelope)."""
    if events.shape[1] < 4:
        events = np.concatenate([events, np.zeros((len(events), 1))], axis=1)
    (_, recall, precision, orientation), best_p, best_o = statistics.envelope(
        events, num_gt, takes_part, desc, ap_mod.CURVE_POSITIONS)
    value, aos, _, _ = ap_mod.curve_ap(proto.interpolation, recall, precision, orientation, (best_p, best_o),
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
