"""``kradar_eval``: drop-in for EchoFusion's ``kradar_eval`` with a ``protocol`` argument.

``evaluate_annos`` does the work and returns an :class:`Evaluation` (APs, curves, counts);
``kradar_eval`` returns ``(result_str, ap_dict)`` like EchoFusion's function.
"""
import numpy as np

from . import ap as ap_mod
from . import geometry
from . import matching
from . import statistics
from .protocols import FAKE_2D_BOX, get_protocol
from .validation import check_eval_types, check_frames, resolve_classes
#: the metrics evaluated (this module's public name since the first release; defined in ``matching``)
METRICS = matching.METRICS
#: EchoFusion's default ``eval_types`` (a tuple here: never mutated)
DEFAULT_EVAL_TYPES = ('bev', '3d')


#: operating points kept per curve for plots (all of them up to this many, else evenly spaced ones)
MAX_CURVE_POINTS = 2000


class Evaluation(object):
    """Everything one evaluation produced.

    ``ap[metric]`` and ``aos`` (2D only, or None) are arrays (class, column, IoU threshold) in percent;
    ``curves[(metric, class, column_index, iou_index)]`` holds ``recall``/``precision`` (the 41 points the
    AP is read from) and the operating points ``threshold_recall``/``threshold_precision`` at the score
    ``thresholds`` (every one up to ``MAX_CURVE_POINTS``, else that many evenly spaced ones, first and last
    included); ``num_gt[(class, column_index)]`` counts the GT that count.
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
        self.result_str = ''
        self.ap_dict = {}

    def table(self):
        """This evaluation as one compact table (``report.compact_table``)."""
        from . import report
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


def _thin(n):
    """Indices of the operating points kept for a curve of ``n`` points."""
    if n <= MAX_CURVE_POINTS:
        return slice(None)
    return np.unique(np.linspace(0, n - 1, MAX_CURVE_POINTS).round().astype(np.int64))


def _one_curve(protocol, args, ign_gt, ign_dt, order, min_overlap, compute_aos):
    """AP (and AOS) for one class / column / metric / IoU threshold; returns (ap, aos, curve)."""
    rule = matching.curve_rule(protocol)
    events, tp_scores = statistics.events_for(args, ign_gt, ign_dt, order, min_overlap, compute_aos,
                                              rule.first_pass)
    thresholds, recall, precision, orientation, envelope = rule.pooled(events, tp_scores, ign_gt, ign_dt, order)
    value, aos, curve_recall, curve_precision = ap_mod.curve_ap(protocol.interpolation, recall, precision,
                                                                orientation, envelope, compute_aos)
    keep = _thin(len(thresholds))
    curve = {'recall': curve_recall, 'precision': curve_precision, 'threshold_recall': recall[keep],
             'threshold_precision': precision[keep], 'thresholds': thresholds[keep]}
    return value, aos, curve


def fields_read(protocols, iou_mode='all', eval_types=DEFAULT_EVAL_TYPES, **protocol_overrides):
    """The optional input fields an :func:`evaluate_protocols` call with these arguments reads (what
    ``validation.check_side`` must check when a side is checked ahead, e.g. in a worker process)."""
    protos = [get_protocol(p, iou_mode=iou_mode, **protocol_overrides) for p in protocols]
    return _reads_all(protos, check_eval_types(eval_types))


def _reads_all(protos, eval_types):
    reads = set()
    for proto in protos:
        reads.update(_reads(proto, eval_types))
    return reads


def warm_up(protocols, iou_mode='all', eval_types=DEFAULT_EVAL_TYPES, **protocol_overrides):
    """Load (or compile) every compiled kernel these evaluations use, by evaluating two built-in frames:
    numba's one-time start-up (about a second) then overlaps whatever the caller runs meanwhile (the
    CLI reads its pickles in worker processes). Decides the numba / plain mode, warning once as usual."""
    box = {'name': np.array(['Sedan', 'Sedan']), 'truncated': np.zeros(2), 'occluded': np.zeros(2),
           'alpha': np.zeros(2), 'bbox': np.tile(np.asarray(FAKE_2D_BOX, dtype=np.float64), (2, 1)),
           'location': np.array([[0.0, 0.5, 10.0], [3.0, 0.5, 20.0]]),
           'dimensions': np.array([[4.0, 1.5, 1.8], [4.2, 1.6, 1.9]]), 'rotation_y': np.array([0.1, -0.4])}
    det = dict(box, location=box['location'] + 0.2, score=np.array([0.9, 0.4]))
    evaluate_protocols([box, box], [det, det], ['Sedan'], protocols, iou_mode, eval_types,
                       **protocol_overrides)


def _reads(proto, eval_types):
    """The optional input fields an evaluation reads."""
    reads = set()
    if proto.difficulty == 'kitti':
        reads.update(('truncated', 'occluded', 'bbox'))
    if 'bbox' in eval_types:
        reads.update(('alpha', 'bbox'))
    return reads


class _Prepared(object):
    """Checked frames and what every protocol evaluated on them shares: pair index, score orders and
    overlaps (keyed by metric and the protocol's footprint / height settings)."""

    def __init__(self, frames):
        self.frames = frames
        self.pairs = geometry.FramePairs(frames.dt_off, frames.gt_off)
        self.order = statistics.ScoreOrder(frames.dt['score'], frames.dt_off)
        self.scores = np.ascontiguousarray(frames.dt['score'], dtype=np.float64)
        self.gt_alpha = np.ascontiguousarray(frames.gt.get('alpha', np.zeros(len(frames.gt['name']))),
                                             dtype=np.float64)
        self.dt_alpha = np.ascontiguousarray(frames.dt.get('alpha', np.zeros(len(frames.dt['name']))),
                                             dtype=np.float64)
        self.cache = {}

    def overlaps(self, metric, proto):
        key = (metric, proto.yaw_offset, proto.z_center if metric == '3d' else None)
        if key not in self.cache:
            self.cache[key] = np.ascontiguousarray(_overlaps(self.frames, self.pairs, metric, proto, self.cache),
                                                   dtype=np.float64)
        return self.cache[key]


def evaluate_annos(gt_annos, dt_annos, current_classes, iou_mode='all', eval_types=DEFAULT_EVAL_TYPES, *,
                   protocol='legacy', progress=None, **protocol_overrides):
    """Evaluate per-frame annotations in EchoFusion's ``format_anno`` layout; returns an Evaluation.

    Arguments as :func:`kradar_eval`; ``progress``: None, or an object with ``start(total, label)``,
    ``update(n)`` and ``close()`` (the CLI's progress bar) told about each finished step.
    """
    return evaluate_protocols(gt_annos, dt_annos, current_classes, [protocol], iou_mode, eval_types,
                              progress=progress, **protocol_overrides)[0]


def evaluate_protocols(gt_annos, dt_annos, current_classes, protocols, iou_mode='all',
                       eval_types=DEFAULT_EVAL_TYPES, *, progress=None, frame_rule=False, score_threshold=None,
                       **protocol_overrides):
    """:func:`evaluate_annos` for several protocols (names or Protocols) on the same input, which is
    checked once and shares its overlaps; returns one Evaluation per protocol, in order.

    ``frame_rule``: apply each protocol's rule on frames without GT of ``current_classes`` (dropped with
    their detections where ``drop_frames_without_gt``), as K-Radar's pipeline does before its evaluator;
    ``score_threshold``: keep the detections with ``score > T``. Both select from the checked frames
    without recomputing overlaps."""
    protos = [get_protocol(p, iou_mode=iou_mode, **protocol_overrides) for p in protocols]
    prepared = prepare(gt_annos, dt_annos, protos, eval_types)
    return evaluate_prepared(prepared, current_classes, protos, eval_types, progress=progress,
                             frame_rule=frame_rule, score_threshold=score_threshold)


def prepare(gt_annos, dt_annos, protocols, eval_types=DEFAULT_EVAL_TYPES):
    """Checked frames with their shared pair index and score orders; overlaps are computed on first use
    and cached (``protocols``: names or Protocols, for the fields to check)."""
    protos = [get_protocol(p) for p in protocols]
    return _Prepared(check_frames(gt_annos, dt_annos, _reads_all(protos, check_eval_types(eval_types))))


def evaluate_prepared(prepared, current_classes, protocols, eval_types=DEFAULT_EVAL_TYPES, *, progress=None,
                      frame_rule=False, score_threshold=None):
    """:func:`evaluate_protocols` on a :func:`prepare`-d set (Protocols)."""
    protos = list(protocols)
    eval_types = check_eval_types(eval_types)
    frames = prepared.frames
    classes = resolve_classes(current_classes)
    views = _views(prepared, protos, classes, frame_rule, score_threshold)
    plans = [matching.plan_curves(proto, views[proto.drop_frames_without_gt].frames if views else frames, classes,
                                  eval_types) for proto in protos]
    if progress is not None:
        progress.start(1 + sum(plan.n_curves for plan in plans), 'K-Radar {} ({} frames)'.format(
            '/'.join(p.name for p in protos), frames.n_frames))
        progress.update(1)
    try:
        return [_evaluate(proto, views[proto.drop_frames_without_gt] if views else prepared, classes, plan, progress)
                for proto, plan in zip(protos, plans)]
    finally:
        if progress is not None:
            progress.close()


def _views(prepared, protos, classes, frame_rule, score_threshold):
    """{drops frames without GT: prepared subset} when a frame rule or threshold applies, else None."""
    from .subset import select
    n = prepared.frames.n_frames
    kept = {}
    for proto in protos:     # the frame rule (matching.frames_kept) where asked for, else every frame
        kept[proto.drop_frames_without_gt] = (matching.frames_kept(prepared.frames, classes, proto) if frame_rule
                                              else np.ones(n, dtype=bool))
    if all(k.all() for k in kept.values()) and score_threshold is None:
        return None
    keep = None if score_threshold is None else prepared.scores > float(score_threshold)
    return dict((drop, select(prepared, np.flatnonzero(k), keep)) for drop, k in kept.items())


def _evaluate(proto, prepared, classes, plan, progress):
    from . import report
    metrics, compute_aos, ignores, same_as, _ = plan
    frames, order = prepared.frames, prepared.order
    columns = proto.column_labels()
    n_iou = len(proto.iou_thresholds)
    result = Evaluation(proto, classes, tuple(metrics), columns, frames.n_frames)
    for (c, k), (ign_gt, _) in ignores.items():
        result.num_gt[(classes[c], k)] = int(np.sum(ign_gt == 0))
    if compute_aos:
        result.aos = np.zeros((len(classes), len(columns), n_iou))
    args = {}
    for metric in metrics:
        args[metric] = matching.match_inputs(prepared, metric, proto)
        result.ap[metric] = np.zeros((len(classes), len(columns), n_iou))

    def curve(task):
        ign_gt, ign_dt = ignores[(task.cls, task.column)]
        return _one_curve(proto, args[task.metric], ign_gt, ign_dt, order, float(proto.iou_thresholds[task.iou]),
                          task.metric == 'bbox' and compute_aos)

    def store(task, out):
        value, aos, curve_ = out
        result.ap[task.metric][task.cls, task.column, task.iou] = value
        if aos is not None:
            result.aos[task.cls, task.column, task.iou] = aos
        result.curves[(task.metric, classes[task.cls], task.column, task.iou)] = curve_
        if progress is not None:
            progress.update(1)

    matching.run_tasks(matching.tasks_of(plan, n_iou), curve, store)
    for metric in metrics:
        for (c, k), j in same_as.items():
            result.ap[metric][c, k] = result.ap[metric][c, j]
            if metric == 'bbox' and compute_aos:
                result.aos[c, k] = result.aos[c, j]
            for i in range(n_iou):
                result.curves[(metric, classes[c], k, i)] = result.curves[(metric, classes[c], j, i)]
    result.result_str = report.result_string(result)
    result.ap_dict = report.ap_dict(result)
    return result


def kradar_eval(gt_annos, dt_annos, current_classes, iou_mode='all', eval_types=DEFAULT_EVAL_TYPES, *,
                protocol='legacy', **protocol_overrides):
    """K-Radar evaluation of per-frame annotation dicts; returns ``(result_str, ap_dict)``.

    The first five parameters are EchoFusion's ``kradar_eval(gt_annos, dt_annos, current_classes,
    iou_mode='all', eval_types=['bev', '3d'])``, positional or keyword: ``iou_mode`` 'all' evaluates the
    protocol's IoU thresholds (0.3, 0.5, 0.7), 'easy' / 'mod' / 'hard' only 0.3 / 0.5 / 0.7;
    ``eval_types`` from 'bbox', 'bev', '3d' ('aos' needs 'bbox'; AOS is computed with 'bbox' when the
    alphas are valid, as in EchoFusion) and is never modified. Keyword only: ``protocol``: 'legacy'
    (EchoFusion's numbers and key names, with a correct IoU), 'kradar' (K-Radar's eval.py), 'revised' or
    'fixed' (see ``protocols.PROTOCOLS``), or a :class:`Protocol`; ``protocol_overrides`` replace single settings,
    e.g. ``distance_edges=(0, 20, 40, 72)``. Every given frame is evaluated (detections in a frame without
    GT are false positives); dropping frames is the dataset step's business.
    """
    result = evaluate_annos(gt_annos, dt_annos, current_classes, iou_mode, eval_types, protocol=protocol,
                            **protocol_overrides)
    return result.result_str, result.ap_dict
