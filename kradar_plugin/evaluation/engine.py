"""The evaluation engine: prepared set -> event table -> evaluations, with the KITTI matching run once.

:func:`prepare` checks both sides and concatenates them over frames, with the pair index, the score orders
and the overlaps (computed on first use, shared by every protocol with the same footprint and height
settings). An :class:`EventTable` runs the matching of one protocol on a prepared set once, for each class,
difficulty column, metric and IoU threshold; every number is then read from its events: the pooled AP is
the selection of all frames (:meth:`EventTable.match`), a condition or user group, or a bootstrap draw that
repeats sequences, is another selection (:meth:`EventTable.read`), each frame weighted by how often it is
drawn. The protocol's frame rule is one more weight: 0 for the frames it drops.

KITTI matching is per frame: a frame's matches, and so its changes of tp / fp / fn / similarity at each
score level (``statistics.frame_events``), do not depend on the other frames. A confidence threshold T
(K-Radar keeps ``score > T``) needs no new matching either. The first pass gives each GT, in order, the
highest-scoring free detection: dropping every detection scoring <= T drops exactly the TP scores <= T and
changes no assignment of a higher one. The threshold pass at a score threshold t reads only the detections
scoring >= t, and every such t (a TP score) lies above T. The detections above T are the first rows of the
global score order.
"""
import numpy as np

from . import geometry, matching, report, statistics
from .protocols import FAKE_2D_BOX, get_protocol
from .validation import check_eval_types, check_frames

#: operating points kept per curve for plots (all of them up to this many, else evenly spaced ones)
MAX_CURVE_POINTS = 2000


class Evaluation(object):
    """Everything one evaluation produced.

    ``ap[metric]`` and ``aos`` (2D only, or None) are arrays (class, column, IoU threshold) in percent;
    ``num_gt[(class, column_index)]`` counts the GT that count; ``curves[(metric, class, column_index,
    iou_index)]``, filled where plots ask for them (``KRadarEvaluator(curves=True)``, ``kradar-eval
    --plot-dir``), holds ``recall``/``precision`` (the 41 points the AP is read from) and the operating points
    ``threshold_recall``/``threshold_precision`` at the score ``thresholds`` (every one up to
    ``MAX_CURVE_POINTS``, else that many evenly spaced ones, first and last included). ``result_str`` (the
    printed table) and ``ap_dict`` (flat metrics) are made on first use.
    """

    def __init__(self, protocol, classes, metrics, columns, n_frames):
        self.protocol = protocol
        self.classes = classes
        self.metrics = metrics
        self.columns = columns
        self.ious = protocol.iou_thresholds
        self.n_frames = n_frames
        self.ap = {}
        self.aos = None
        self.curves = {}
        self.num_gt = {}
        self._text = {}

    @property
    def result_str(self):
        if 'result_str' not in self._text:
            self._text['result_str'] = report.result_string(self)
        return self._text['result_str']

    @property
    def ap_dict(self):
        if 'ap_dict' not in self._text:
            self._text['ap_dict'] = report.ap_dict(self)
        return self._text['ap_dict']

    def table(self):
        """This evaluation as one compact table (``report.compact_table``)."""
        return report.compact_table([self])


def _overlaps(frames, pairs, metric, protocol, cache):
    """Flat per-pair overlaps for ``metric``; the BEV intersection areas are shared by bev and 3d."""
    gt, dt = frames.gt, frames.dt
    if metric == 'bbox':
        return geometry.image_iou(pairs, dt['bbox'], gt['bbox'])
    key = ('inter', protocol.yaw_offset)
    if key not in cache:
        dt_fp = geometry.bev_footprints(dt['location'], dt['dimensions'], dt['rotation_y'], protocol.yaw_offset)
        gt_fp = geometry.bev_footprints(gt['location'], gt['dimensions'], gt['rotation_y'], protocol.yaw_offset)
        cache[key] = geometry.intersection_areas(pairs, dt_fp, gt_fp)
    inter = cache[key]
    if metric == 'bev':
        return geometry.bev_iou(pairs, inter, dt['dimensions'], gt['dimensions'])
    return geometry.iou_3d(pairs, inter, dt['location'], dt['dimensions'], gt['location'], gt['dimensions'],
                           protocol.z_center)


class Prepared(object):
    """Checked frames and what every protocol evaluated on them shares: pair index, score orders and
    overlaps (keyed by metric and the protocol's footprint / height settings)."""

    def __init__(self, frames):
        self.frames = frames
        self.pairs = geometry.FramePairs(frames.dt_off, frames.gt_off)
        self.order = statistics.ScoreOrder(frames.dt['score'], frames.dt_off)
        self.scores = np.ascontiguousarray(frames.dt['score'], dtype=np.float64)
        self.gt_alpha, self.dt_alpha = (np.ascontiguousarray(side.get('alpha', np.zeros(len(side['name']))),
                                                             dtype=np.float64) for side in (frames.gt, frames.dt))
        self.cache = {}

    def overlaps(self, metric, proto):
        key = (metric, proto.yaw_offset, proto.z_center if metric == '3d' else None)
        if key not in self.cache:
            self.cache[key] = np.ascontiguousarray(_overlaps(self.frames, self.pairs, metric, proto, self.cache),
                                                   dtype=np.float64)
        return self.cache[key]


def prepare(gt_annos, dt_annos, protocols, eval_types):
    """The :class:`Prepared` set of two sides (annotation lists or checked sides) for ``protocols`` (names or
    Protocols, for the optional fields to check) and ``eval_types``."""
    protos = [get_protocol(p) for p in protocols]
    return Prepared(check_frames(gt_annos, dt_annos, _reads_all(protos, check_eval_types(eval_types))))


def fields_read(protocols, iou_mode, eval_types, **protocol_overrides):
    """The optional input fields an evaluation of ``protocols`` with these arguments reads (what
    ``validation.check_side`` must check when a side is checked ahead, e.g. in a worker process)."""
    protos = [get_protocol(p, iou_mode=iou_mode, **protocol_overrides) for p in protocols]
    return _reads_all(protos, check_eval_types(eval_types))


def _reads_all(protos, eval_types):
    reads = set()
    for proto in protos:
        if proto.difficulty == 'kitti':
            reads.update(('truncated', 'occluded', 'bbox'))
        if 'bbox' in eval_types:
            reads.update(('alpha', 'bbox'))
    return reads


def warm_up(protocols, iou_mode, eval_types, **protocol_overrides):
    """Load (or compile) every compiled kernel these evaluations use, by evaluating two built-in frames:
    numba's one-time start-up (about a second) then overlaps whatever the caller runs meanwhile (the
    CLI reads its pickles in worker processes). Decides the numba / plain mode, warning once as usual."""
    box = {'name': np.array(['Sedan', 'Sedan']), 'truncated': np.zeros(2), 'occluded': np.zeros(2),
           'alpha': np.zeros(2), 'bbox': np.tile(np.asarray(FAKE_2D_BOX, dtype=np.float64), (2, 1)),
           'location': np.array([[0.0, 0.5, 10.0], [3.0, 0.5, 20.0]]),
           'dimensions': np.array([[4.0, 1.5, 1.8], [4.2, 1.6, 1.9]]), 'rotation_y': np.array([0.1, -0.4])}
    det = dict(box, location=box['location'] + 0.2, score=np.array([0.9, 0.4]))
    protos = [get_protocol(p, iou_mode=iou_mode, **protocol_overrides) for p in protocols]
    prepared = prepare([box, box], [det, det], protos, eval_types)
    for proto in protos:
        EventTable(proto, prepared, ('Sedan',), eval_types).match(keep=False)


class EventTable(object):
    """Matching events of one protocol on one :class:`Prepared` set: overlaps come from the prepared set's
    cache, so several protocols on the same frames share them. ``frame_rule``: frames the protocol drops
    (``matching.frames_kept``) weigh 0 in every selection; False: every frame counts (``kradar_eval``)."""

    def __init__(self, proto, prepared, classes, eval_types, frame_rule=True):
        frames = prepared.frames
        self.proto = proto
        self.prepared = prepared
        self.classes = tuple(classes)
        self.plan = plan = matching.plan_curves(proto, frames, classes, check_eval_types(eval_types))
        self.metrics, self.compute_aos, self.same_as = plan.metrics, plan.compute_aos, plan.same_as
        self.columns = proto.column_labels()
        self.n_frames = n = frames.n_frames
        order = prepared.order
        self.desc = order.desc
        dt_frame = np.repeat(np.arange(n, dtype=np.int64), np.diff(frames.dt_off))
        self.glob_frame = dt_frame[order.glob]          # frame of each detection, in global score order
        gt_frame = np.repeat(np.arange(n, dtype=np.int64), np.diff(frames.gt_off))
        self.kept = matching.frames_kept(frames, classes, proto) if frame_rule else np.ones(n, dtype=bool)
        self.gt_per_frame = {}
        self.takes_part = {}
        for key, (ign_gt, ign_dt) in plan.ignores.items():
            self.gt_per_frame[key] = np.bincount(gt_frame[ign_gt == 0], minlength=n).astype(np.int64)
            self.takes_part[key] = np.ascontiguousarray(ign_dt[order.glob] != -1)
        self.rule = matching.CURVE_RULES[proto.threshold_selection]
        self.events = None

    def frame_weights(self, frame_idx=None):
        """How often each frame is drawn (int64, one per frame) for the frames ``frame_idx`` (repeats
        allowed; None: every frame once); frames the frame rule drops get 0."""
        if frame_idx is None:
            weights = np.ones(self.n_frames, dtype=np.int64)
        else:
            weights = np.bincount(np.asarray(frame_idx, dtype=np.int64), minlength=self.n_frames).astype(np.int64)
        weights[~self.kept] = 0
        return weights

    def match(self, score_thresholds=(None,), curves=False, keep=True, progress=None):
        """Run the matching (once per table): returns one Evaluation per score threshold (None: every
        detection) of the frames the frame rule keeps -- the pooled AP -- with precision-recall curves when
        ``curves``. ``keep``: hold the events for :meth:`read` (groups, bootstrap draws); ``progress``: a bar
        (``progress.make_bar``) told about each curve."""
        proto, prepared, plan = self.proto, self.prepared, self.plan
        pooled = _Selection(self, self.frame_weights(), score_thresholds, None, curves)
        self.events = {}
        args = {}

        def run(task):
            ign_gt, ign_dt = plan.ignores[(task.cls, task.column)]
            return statistics.events_for(args[task.metric], ign_gt, ign_dt, prepared.order,
                                         float(proto.iou_thresholds[task.iou]),
                                         task.metric == 'bbox' and self.compute_aos, self.rule.first_pass)

        def done(task, out):
            pooled.add(task, out)
            if keep:
                self.events[task] = out
            if progress is not None:
                progress.update(1)

        tasks = [matching.Task(metric, c, k, i) for metric in plan.metrics for (c, k) in sorted(plan.ignores)
                 if (c, k) not in plan.same_as for i in range(len(proto.iou_thresholds))]   # identical columns once
        if progress is not None:
            progress.start(1 + len(tasks), 'K-Radar {} ({} frames)'.format(proto.name, self.n_frames))
            progress.update(1)
        try:
            for metric in self.metrics:     # the overlaps, from the prepared set's cache or computed there
                args[metric] = matching.match_inputs(prepared, metric, proto)
            matching.run_tasks(tasks, run, done)
        finally:
            if progress is not None:
                progress.close()
        return pooled.finish()

    def read(self, weights, score_thresholds, metrics=None):
        """One Evaluation (AP, AOS and GT counts; no curves) per score threshold of the frames weighted by
        ``weights`` (:meth:`frame_weights`), with ``metrics`` (None: the table's). The selection's events are
        gathered and summed once for every threshold."""
        if self.events is None:
            raise RuntimeError('EventTable.read needs the events: call match(keep=True) first')
        selection = _Selection(self, weights, score_thresholds, metrics, False)
        for task, out in self.events.items():
            selection.add(task, out)
        return selection.finish()


class _Selection(object):
    """The Evaluations of one selection of a table's frames at several score thresholds, filled task by task
    (:meth:`add`) as the matching delivers them or from the kept events. A threshold T only drops the TP
    scores <= T (the counts are read at TP scores, all above T) and, for every-score protocols, the
    detections after the first <= T."""

    def __init__(self, table, weights, score_thresholds, metrics, curves):
        self.table, self.curves = table, curves
        self.weights = weights = np.asarray(weights, dtype=np.int64)
        self.thresholds = list(score_thresholds)
        # np.take: several times faster than fancy indexing on these sizes
        w_glob = np.take(weights, table.glob_frame)
        if bool(np.all(w_glob == 1)):          # every detection once: the events as they are
            self.rows, self.row_w, self.desc = None, None, table.desc
        else:
            self.rows = np.flatnonzero(w_glob)
            row_w = np.take(w_glob, self.rows)
            self.row_w = None if bool(np.all(row_w == 1)) else row_w.astype(np.float64)[:, None]
            self.desc = np.take(table.desc, self.rows)
        self.n_keep = [len(self.desc) if t is None else int(np.searchsorted(-self.desc, -float(t), side='left'))
                       for t in self.thresholds]
        self.metrics = tuple(m for m in table.metrics if metrics is None or m in metrics)
        self.compute_aos = table.compute_aos and 'bbox' in self.metrics
        self.cols = table.rule.event_columns(self.compute_aos)
        self.num_gt = dict((key, int(np.dot(weights, per_frame))) for key, per_frame in table.gt_per_frame.items())
        shape = (len(table.classes), len(table.columns), len(table.proto.iou_thresholds))
        self.results = []
        for _ in self.thresholds:
            result = Evaluation(table.proto, table.classes, self.metrics, table.columns, int(weights.sum()))
            for (c, k), count in self.num_gt.items():
                result.num_gt[(table.classes[c], k)] = count
            result.aos = np.zeros(shape) if self.compute_aos else None
            result.ap = dict((metric, np.zeros(shape)) for metric in self.metrics)
            self.results.append(result)
        if not table.rule.reads_takes_part:
            self.takes_part = dict.fromkeys(table.takes_part)
        elif self.rows is None:
            self.takes_part = table.takes_part
        else:
            self.takes_part = dict((key, np.take(part, self.rows)) for key, part in table.takes_part.items())

    def add(self, task, out):
        """Read one task's events (events, TP scores, their frames) for every threshold."""
        metric, c, k, i = task
        if metric not in self.metrics:
            return
        table, weights = self.table, self.weights
        events, tp_scores, tp_frame = out
        selected = events if self.rows is None else np.take(events, self.rows, axis=0)
        if self.cols < selected.shape[1]:
            selected = selected[:, :self.cols]
        if self.row_w is not None:
            selected = selected * self.row_w
        state = table.rule.selection(selected)
        tp_w = np.take(weights, tp_frame)
        picked = tp_w > 0
        # the selection's TP scores sorted once: a threshold T keeps the suffix of scores > T
        all_tps = np.sort(np.repeat(tp_scores[picked], tp_w[picked]))
        with_aos = metric == 'bbox' and self.compute_aos
        for result, threshold, keep in zip(self.results, self.thresholds, self.n_keep):
            tps = all_tps if threshold is None else all_tps[np.searchsorted(all_tps, float(threshold), side='right'):]
            value, aos, points = table.rule.of_selection(table.proto, state, keep, self.num_gt[(c, k)], tps,
                                                         self.desc, self.takes_part[(c, k)], with_aos)
            result.ap[metric][c, k, i] = value
            if aos is not None:
                result.aos[c, k, i] = aos
            if self.curves:
                result.curves[(metric, table.classes[c], k, i)] = _curve(*points)

    def finish(self):
        """The Evaluations, with the columns identical to an earlier one (``same_as``) copied."""
        classes, n_iou = self.table.classes, len(self.table.proto.iou_thresholds)
        for result in self.results:
            for (c, k), j in self.table.same_as.items():
                for metric in self.metrics:
                    result.ap[metric][c, k] = result.ap[metric][c, j]
                    for i in range(n_iou if self.curves else 0):
                        result.curves[(metric, classes[c], k, i)] = result.curves[(metric, classes[c], j, i)]
                if self.compute_aos:
                    result.aos[c, k] = result.aos[c, j]
        return self.results


def _curve(thresholds, recall, precision, curve_recall, curve_precision):
    """A curve of ``Evaluation.curves``: the AP's points and the operating points (thinned)."""
    n = len(thresholds)   # the operating points kept
    keep = slice(None) if n <= MAX_CURVE_POINTS else np.unique(
        np.linspace(0, n - 1, MAX_CURVE_POINTS).round().astype(np.int64))
    return {'recall': curve_recall, 'precision': curve_precision, 'threshold_recall': recall[keep],
            'threshold_precision': precision[keep], 'thresholds': thresholds[keep]}
