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

from . import matching, report, statistics
from .kradar_eval import Evaluation


class EventTable(object):
    """Matching events of one protocol on one prepared set (``kradar_eval._Prepared``): overlaps come from
    the prepared set's cache, so several protocols on the same frames share them."""

    def __init__(self, proto, prepared, classes, eval_types):
        frames = prepared.frames
        self.proto = proto
        self.classes = tuple(classes)
        plan = matching.plan_curves(proto, frames, classes, eval_types)
        self.metrics, self.compute_aos, self.same_as = plan.metrics, plan.compute_aos, plan.same_as
        ignores = plan.ignores
        self.columns = proto.column_labels()
        self.n_frames = n = frames.n_frames
        order = prepared.order
        self.desc = order.desc
        dt_frame = np.repeat(np.arange(n, dtype=np.int64), np.diff(frames.dt_off))
        self.glob_frame = dt_frame[order.glob]          # frame of each detection, in global score order
        gt_frame = np.repeat(np.arange(n, dtype=np.int64), np.diff(frames.gt_off))
        self.kept = matching.frames_kept(frames, classes, proto)     # the frame rule
        self.gt_per_frame = {}
        self.takes_part = {}
        for key, (ign_gt, ign_dt) in ignores.items():
            self.gt_per_frame[key] = np.bincount(gt_frame[ign_gt == 0], minlength=n).astype(np.int64)
            self.takes_part[key] = np.ascontiguousarray(ign_dt[order.glob] != -1)
        self.rule = rule = matching.curve_rule(proto)
        args = dict((metric, matching.match_inputs(prepared, metric, proto)) for metric in self.metrics)

        def run(task):
            ign_gt, ign_dt = ignores[(task.cls, task.column)]
            (events, _), tp_scores, tp_frame = statistics.events_for(
                args[task.metric], ign_gt, ign_dt, order, float(proto.iou_thresholds[task.iou]),
                task.metric == 'bbox' and self.compute_aos, rule.first_pass, with_frames=True)
            return events, tp_scores, tp_frame

        tasks = matching.tasks_of(plan, len(proto.iou_thresholds))
        self.events = dict(zip(tasks, matching.run_tasks(tasks, run)))

    def frame_weights(self, frame_idx, frame_rule=True):
        """How often each frame is drawn (int64, one per frame) for the frames ``frame_idx`` (repeats
        allowed); with ``frame_rule``, frames without GT get 0 where the protocol drops them."""
        weights = np.bincount(np.asarray(frame_idx, dtype=np.int64), minlength=self.n_frames).astype(np.int64)
        if frame_rule:
            weights[~self.kept] = 0
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
        proto, classes, rule = self.proto, self.classes, self.rule
        cols = rule.event_columns(self.compute_aos)
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
        takes_part = dict((key, np.take(part, rows)) for key, part in self.takes_part.items()) \
            if rule.reads_takes_part else dict.fromkeys(self.takes_part)
        for (metric, c, k, i), (events, tp_scores, tp_frame) in self.events.items():
            selected = np.take(events, rows, axis=0)
            if cols < selected.shape[1]:
                selected = selected[:, :cols]
            if row_w is not None:
                selected = selected * row_w
            state = rule.selection(selected)
            tp_w = np.take(weights, tp_frame)
            with_aos = metric == 'bbox' and compute_aos
            picked = tp_w > 0
            # the selection's TP scores sorted once: a threshold T keeps the suffix of scores > T
            all_tps = np.sort(np.repeat(tp_scores[picked], tp_w[picked]))
            for result, threshold, keep in zip(results, score_thresholds, n_keep):
                tps = all_tps if threshold is None else all_tps[
                    np.searchsorted(all_tps, float(threshold), side='right'):]
                value, aos = rule.of_selection(proto, state, keep, num_gt[(c, k)], tps, desc, takes_part[(c, k)],
                                               with_aos)
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
