"""K-Radar's per-condition evaluation: groups, confidence thresholds, bootstrap intervals over sequences, and a
paired comparison of two models -- read from event tables (``engine.EventTable``), matching done once.

:func:`groups_at` returns the ``--json`` payload's ``groups``: ``{name: {"frames": n, "gt": {class:
n}, "metrics": {key: AP or None}[, "ci95": {key: [lo, hi] or null}, "sequences": n][, "metrics_b": {...},
"delta": {key: B - A}][, "delta_ci95": {...}]}}``; ``ci95`` is null where the group has fewer than two
sequences (resampling one sequence gives no interval). Without sequences (K-Radar's prediction folders) frames
are resampled: ``sequences`` is null and ``resampled_frames`` counts them.
The frame rule (``legacy``, ``kradar``, ``revised``: frames without GT of the evaluated classes are dropped
with their detections; ``fixed``: kept) is the tables' frame weights, so it holds on every input path. A group
is evaluated even with a single frame (K-Radar's own evaluator fails under 10).
"""
import zlib

import numpy as np

from . import conditions as cond
from .report import json_metrics


def groups_at(tables, conditions=None, score_thresholds=(None,), metrics=None, bootstrap=0, seed=0,
              user_groups=None, groups_only=False, progress=None):
    """``{group: {...}}`` (see the module docstring) at each of ``score_thresholds`` (K-Radar's pipeline runs
    0.3, 0.5 and 0.7): one dict per threshold, each group's events gathered once for all of them (the same
    bootstrap draws).

    ``tables``: the matched :class:`~kradar_plugin.evaluation.engine.EventTable` of model A (and B, on the
    same GT) for one protocol; ``metrics``: the metrics reported (None: the tables'). ``conditions``: one
    ``{'road_type', 'capture_time', 'climate'[, 'sequence']}`` per frame (None: ``total`` only).
    ``bootstrap``: replicates that resample, in each group, its whole sequences (a frame's ``sequence``; each
    frame its own when absent) with replacement, seeded by ``seed`` and the group's name (the same seed gives
    the same intervals); model A and B share the draws (paired). ``user_groups``: ``groups.UserGroup`` list,
    added as ``group/<name>`` (``groups_only``: without the condition groups). ``progress``: a bar
    (``progress.make_bar``) told about each bootstrap replicate."""
    thresholds = list(score_thresholds)
    n = tables[0].n_frames
    if conditions is not None and len(conditions) != n:
        raise ValueError('conditions describe {} frames but {} frames are evaluated'.format(len(conditions), n))
    kept = np.flatnonzero(tables[0].frame_weights())
    outs = [{} for _ in thresholds]
    selections = cond.groups(conditions, kept, user_groups, groups_only)
    if progress is not None and bootstrap:
        progress.start(len(selections) * int(bootstrap), 'bootstrap ({} replicates x {} groups)'.format(
            int(bootstrap), len(selections)))
    for name, idx in selections.items():
        if not len(idx) and name != 'total' and not name.startswith('group/'):
            continue
        weights = tables[0].frame_weights(idx)
        per_model = [[group_metrics(ev) for ev in t.read(weights, thresholds, metrics)] for t in tables]
        entries = []
        for j, out in enumerate(outs):
            values, gt = per_model[0][j]
            entry = {'frames': len(idx), 'gt': gt, 'metrics': values}
            if len(tables) > 1:
                entry['metrics_b'] = per_model[1][j][0]
                entry['delta'] = _delta(values, per_model[1][j][0])
            out[name] = entry
            entries.append(entry)
        if bootstrap:
            _bootstrap(entries, name, idx, conditions, tables, thresholds, metrics, int(bootstrap), seed, progress)
    if progress is not None and bootstrap:
        progress.close()
    return outs


def group_metrics(evaluation):
    """(``--json`` metrics with None where the class has no GT in the group, {class: GT count}).

    A distance bin without GT of a class is None too; ``Overall`` averages the classes that have GT."""
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


def _delta(a, b):
    return dict((k, None if a.get(k) is None or b.get(k) is None else b[k] - a[k]) for k in a)


def _interval(samples, keys):
    """{key: [2.5th, 97.5th percentile]} over the replicates in which the key has a value (a replicate can
    draw no GT of a class); None with fewer than two such replicates."""
    out = {}
    for key in keys:
        values = [s[key] for s in samples if s.get(key) is not None]
        if len(values) < 2:
            out[key] = None
        else:
            lo, hi = np.percentile(np.asarray(values, dtype=np.float64), [2.5, 97.5])
            out[key] = [float(lo), float(hi)]
    return out


def _bootstrap(entries, name, idx, conditions, tables, thresholds, metrics, replicates, seed, progress=None):
    """Percentile intervals over ``replicates`` draws of the group's sequences (with replacement, as
    many as it has; ``sequences`` their count, and no interval (None) with fewer than two); ``ci95`` for
    model A and, with model B, ``delta_ci95`` for B - A on the same draws (one entry per score threshold, all
    read from each draw); ``progress`` told about each replicate."""
    frames_of = {}
    by_sequence = False
    for i in idx:
        seq = conditions[i].get('sequence') if conditions is not None else None
        by_sequence = by_sequence or bool(seq)
        frames_of.setdefault(seq or '#{}'.format(i), []).append(i)
    names = sorted(frames_of)
    blocks = [np.asarray(frames_of[s], dtype=np.int64) for s in names]
    for entry in entries:   # no sequence known (K-Radar's prediction folders): frames are resampled, and said
        entry['sequences'] = len(blocks) if by_sequence or not len(idx) else None
        if entry['sequences'] is None:
            entry['resampled_frames'] = len(blocks)
    if len(blocks) < 2:   # resampling one sequence repeats it: a zero-width interval that is no interval
        for entry in entries:
            entry['ci95'] = dict((key, None) for key in entry['metrics'])
            if len(tables) > 1:
                entry['delta_ci95'] = dict((key, None) for key in entry['metrics'])
        if progress is not None:
            progress.update(replicates)
        return
    rng = np.random.RandomState([int(seed) & 0xffffffff, zlib.crc32(name.encode('utf-8')) & 0xffffffff])
    a_samples = [[] for _ in thresholds]
    d_samples = [[] for _ in thresholds]
    for _ in range(replicates):
        draw = rng.randint(0, len(blocks), size=len(blocks))
        chosen = np.concatenate([blocks[k] for k in draw]) if len(draw) else np.zeros(0, dtype=np.int64)
        weights = tables[0].frame_weights(chosen)
        res = [[group_metrics(ev)[0] for ev in t.read(weights, thresholds, metrics)] for t in tables]
        if progress is not None:
            progress.update(1)
        for j in range(len(thresholds)):
            a_samples[j].append(res[0][j])
            if len(res) > 1:
                d_samples[j].append(_delta(res[0][j], res[1][j]))
    for j, entry in enumerate(entries):
        entry['ci95'] = _interval(a_samples[j], entry['metrics'])
        if len(tables) > 1:
            entry['delta_ci95'] = _interval(d_samples[j], entry['metrics'])
