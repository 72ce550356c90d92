"""Synthetic frames in the evaluator layout (location (y, z, x), dimensions (l, h, w))."""
import numpy as np

FAKE = [50.0, 50.0, 150.0, 150.0]


def frame(location, dimensions, rotation_y, names=None, scores=None):
    location = np.asarray(location, dtype=float).reshape(-1, 3)
    n = len(location)
    out = {
        'name': np.array(names if names is not None else ['Sedan'] * n),
        'truncated': np.zeros(n), 'occluded': np.zeros(n, dtype=int), 'alpha': np.zeros(n),
        'bbox': np.tile(FAKE, (n, 1)),
        'location': location,
        'dimensions': np.asarray(dimensions, dtype=float).reshape(-1, 3),
        'rotation_y': np.asarray(rotation_y, dtype=float).reshape(-1),
    }
    if scores is not None:
        out['score'] = np.asarray(scores, dtype=float).reshape(-1)
    return out


def random_gt(rs, n):
    loc = np.c_[rs.uniform(-6, 6, n), rs.uniform(-0.5, 0.5, n), rs.uniform(3, 70, n)]
    dims = np.c_[rs.uniform(3.5, 5.0, n), rs.uniform(1.4, 1.9, n), rs.uniform(1.6, 2.1, n)]
    return frame(loc, dims, rs.uniform(-np.pi, np.pi, n))


def noisy_dets(rs, gt, n_fp, keep=0.8):
    """Perturbed copies of some GT plus random false positives, random scores."""
    n = len(gt['name'])
    sel = rs.rand(n) < keep
    loc = gt['location'][sel] + rs.normal(0, 0.4, (sel.sum(), 3))
    dims = gt['dimensions'][sel] * rs.uniform(0.8, 1.2, (sel.sum(), 3))
    rot = gt['rotation_y'][sel] + rs.normal(0, 0.2, sel.sum())
    fp = random_gt(rs, n_fp)
    loc = np.concatenate([loc, fp['location']])
    dims = np.concatenate([dims, fp['dimensions']])
    rot = np.concatenate([rot, fp['rotation_y']])
    return frame(loc, dims, rot, scores=rs.uniform(0.05, 1.0, len(loc)))


def perfect(gt, scores=None):
    n = len(gt['name'])
    d = dict((k, np.array(v, copy=True)) for k, v in gt.items())
    d['score'] = np.asarray(scores if scores is not None else np.linspace(0.9, 0.5, max(n, 1))[:n], dtype=float)
    return d


def evaluated(gts, dts, classes, protocol, rows=None, other=None, **settings):
    """A ``KRadarEvaluator`` (``settings``: its keywords; no conditions of its own) after evaluating annotation
    lists, as ``kradar-eval --gt-annos`` does (the protocol's frame rule applies): ``.evaluations``,
    ``.groups`` (``rows``: one condition row per frame; ``other``: model B's detections)."""
    from kradar_plugin.evaluation import KRadarEvaluator
    evaluator = KRadarEvaluator(list(classes), protocol, conditions=None, **settings)
    evaluator.evaluate_gathered(gts, dts, rows, other)
    return evaluator


def dataset_metrics(infos, results, classes, protocol='legacy', eval_types=('bbox', 'bev', '3d'), **settings):
    """``(result_str, metrics)`` of model results against EchoFusion infos through ``KRadarEvaluator.process``
    and ``evaluate``, as the dataset evaluations run it (no condition groups)."""
    from kradar_plugin.evaluation import KRadarEvaluator
    evaluator = KRadarEvaluator(list(classes), protocol, eval_types, conditions=None, **settings)
    evaluator.process(infos, results)
    metrics = evaluator.evaluate()
    return evaluator.evaluations[0].result_str, metrics
