"""K-Radar's per-condition evaluation: groups, a confidence threshold, the protocol's frame rule,
bootstrap intervals over sequences, and a paired comparison of two models -- on overlaps computed once.

``evaluate_grouped`` returns the ``--json`` payload's ``groups``: ``{name: {"frames": n, "gt": {class: n},
"metrics": {key: AP or None}[, "ci95": {key: [lo, hi]}][, "delta": {...}, "delta_ci95": {...}]}}``. The
frame rule (``legacy``, ``kradar``, ``revised``: frames without GT are dropped with their detections;
``fixed``: kept) is applied here, so it holds on every input path. A group is evaluated even with a single
frame (K-Radar's own evaluator fails under 10).
"""
import numpy as np

from . import conditions as cond
from .kradar_eval import DEFAULT_EVAL_TYPES, _evaluate, _plan, _Prepared, fields_read
from .protocols import get_protocol
from .report import json_metrics
from .subset import select
from .validation import check_eval_types, check_frames, resolve_classes


class Side(object):
    """One model's checked frames with overlaps computed once for the metrics the protocol reads."""

    def __init__(self, gt, dt, proto, classes, eval_types):
        self.frames = check_frames(gt, dt, fields_read([proto], 'all', eval_types))
        self.prepared = _Prepared(self.frames)
        for metric in eval_types:
            self.prepared.overlaps(metric, proto)

    def gt_counts(self):
        return np.diff(self.frames.gt_off)


def _class_of(key):
    return key.split('/')[0]


def _metrics(proto, prepared, classes, eval_types):
    """(metrics with None for classes without GT, {class: GT count}) of one prepared subset."""
    plan = _plan(proto, prepared.frames, classes, eval_types)
    ev = _evaluate(proto, prepared, classes, plan, None)
    gt = dict((c, int(ev.num_gt[(c, 0)])) for c in classes)
    metrics = json_metrics(ev)
    for key in metrics:
        if gt.get(_class_of(key), 1) == 0:
            metrics[key] = None
    return metrics, gt


def _interval(samples):
    """{key: [2.5th, 97.5th percentile]} over the replicates in which the key has a value (a replicate can
    draw no GT of a class); None with fewer than two such replicates."""
    out = {}
    for key in samples[0] if samples else ():
        values = [s.get(key) for s in samples if s.get(key) is not None]
        if len(values) < 2:
            out[key] = None
        else:
            lo, hi = np.percentile(np.asarray(values, dtype=np.float64), [2.5, 97.5])
            out[key] = [float(lo), float(hi)]
    return out


def _delta(a, b):
    return dict((k, None if a.get(k) is None or b.get(k) is None else b[k] - a[k]) for k in a)


def evaluate_grouped(gt_annos, dt_annos, current_classes, protocol='legacy', conditions=None,
                     score_threshold=None, iou_mode='all', eval_types=DEFAULT_EVAL_TYPES, bootstrap=0, seed=0,
                     compare_dt_annos=None, **overrides):
    """Evaluate ``dt_annos`` (and ``compare_dt_annos``, model B, on the same frames) per condition group.

    ``conditions``: one ``{'road_type', 'capture_time', 'climate'[, 'sequence']}`` per frame (None: the
    ``total`` group only). ``score_threshold``: keep detections with ``score > T`` (K-Radar's rule).
    ``bootstrap``: replicates resampling, in each group, its whole sequences (a frame's ``sequence``; every
    frame its own sequence when absent) with ``numpy.random.RandomState(seed)``; model A and B share the
    draws (a paired interval for B - A).
    Returns ``(protocol, {group: {...}})``.
    """
    proto = get_protocol(protocol, iou_mode=iou_mode, **overrides)
    eval_types = check_eval_types(eval_types)
    classes = resolve_classes(current_classes)
    sides = [Side(gt_annos, dt_annos, proto, classes, eval_types)]
    if compare_dt_annos is not None:
        sides.append(Side(gt_annos, compare_dt_annos, proto, classes, eval_types))
    n = sides[0].frames.n_frames
    if conditions is not None and len(conditions) != n:
        raise ValueError('conditions describe {} frames but {} frames are evaluated'.format(len(conditions), n))
    frames = np.arange(n)
    if proto.drop_frames_without_gt:
        frames = frames[sides[0].gt_counts() > 0]
    keeps = [None if score_threshold is None else s.prepared.scores > float(score_threshold) for s in sides]
    groups = cond.groups(conditions, frames)
    out = {}
    for name, idx in groups.items():
        if not idx and name != 'total':
            continue
        entry = {'frames': len(idx)}
        results = [_metrics(proto, select(s.prepared, idx, keep), classes, eval_types)
                   for s, keep in zip(sides, keeps)]
        entry['gt'] = results[0][1]
        entry['metrics'] = results[0][0]
        if len(sides) > 1:
            entry['metrics_b'] = results[1][0]
            entry['delta'] = _delta(results[0][0], results[1][0])
        out[name] = entry
    if bootstrap:
        _bootstrap(out, groups, conditions, n, sides, keeps, proto, classes, eval_types, int(bootstrap), seed)
    return proto, out


def _bootstrap(out, groups, conditions, n, sides, keeps, proto, classes, eval_types, replicates, seed):
    """Percentile intervals over ``replicates`` resamplings, in each group, of the group's own sequences
    (with replacement, as many as it has); model A and B get the same draws."""
    sequences = [(c.get('sequence') or '#{}'.format(i)) for i, c in enumerate(conditions)] \
        if conditions is not None else ['#{}'.format(i) for i in range(n)]
    rng = np.random.RandomState(seed)
    for name, idx in groups.items():
        if name not in out:
            continue
        frames_of = {}
        for i in idx:
            frames_of.setdefault(sequences[i], []).append(i)
        names = sorted(frames_of)
        a_samples, d_samples = [], []
        for _ in range(replicates):
            draw = rng.randint(0, len(names), size=len(names)) if names else []
            chosen = [i for k in draw for i in frames_of[names[k]]]
            res = [_metrics(proto, select(s.prepared, chosen, keep), classes, eval_types)[0]
                   for s, keep in zip(sides, keeps)]
            a_samples.append(res[0])
            if len(res) > 1:
                d_samples.append(_delta(res[0], res[1]))
        out[name]['ci95'] = _interval(a_samples)
        if d_samples:
            out[name]['delta_ci95'] = _interval(d_samples)
