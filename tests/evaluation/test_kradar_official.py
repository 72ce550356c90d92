"""Our ``kradar`` and ``revised`` protocols per condition group against K-Radar's own ``eval.py`` and
``eval_revised.py`` run on the same frames, as K-Radar's ``validate_kitti_conditional`` feeds them: frames
without GT skipped, detections kept when ``score > 0.3``, a 'dummy' line for a frame without detections,
one call per class.

K-Radar's code is read at test time from a fetched snapshot (``$KRADAR_REPO`` or the default path in
``_kradar_official``) and run in a child process under numba's CUDA simulator; the test skips when no
snapshot or CUDA simulator is available (CI). The hand-derived cases in ``test_grouped_tables`` always run.
"""

import numpy as np
import pytest

from kradar_plugin.evaluation import KRadarEvaluator

from ._data import frame, noisy_dets, random_gt
from ._kradar_official import snapshot_path
from ._official_run import compare_group, run_official

KEYWORDS = {'Sedan': 'sed', 'Bus or Truck': 'bus'}
THRESHOLD = 0.3


def _available():
    if snapshot_path() is None:
        return 'no K-Radar snapshot (set KRADAR_REPO to a kaist-avelab/K-Radar checkout or git directory)'
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_available() is not None, reason=str(_available()))]


def _data(n_frames=72, seed=5):
    """Sedans and buses, some frames without GT, detections of both classes; three weathers, two roads, two
    times, each with at least 10 frames with GT (K-Radar's evaluator needs 10)."""
    rs = np.random.RandomState(seed)
    gts, dts, conds = [], [], []
    for i in range(n_frames):
        n = 0 if i % 9 == 4 else rs.randint(1, 5)
        g = random_gt(rs, n)
        g['name'] = np.array(['Bus or Truck' if rs.rand() < 0.3 else 'Sedan' for _ in range(n)])
        d = noisy_dets(rs, g, rs.randint(0, 3))
        d['name'] = np.array(['Bus or Truck' if rs.rand() < 0.3 else 'Sedan' for _ in range(len(d['score']))])
        gts.append(g)
        dts.append(d)
        conds.append({'climate': ('normal', 'fog', 'rain')[(i // 8) % 3], 'road_type': ('urban', 'highway')[i % 2],
                      'capture_time': 'day' if i < n_frames // 2 else 'night', 'sequence': str(i // 8)})
    return gts, dts, conds


def _kradar_side(annos, keep=None):
    out = dict((k, np.array(v, copy=True)) for k, v in annos.items())
    if keep is not None:
        out = dict((k, v[keep]) for k, v in out.items())
    out['name'] = np.array([KEYWORDS.get(str(n), str(n)) for n in out['name']])
    return out


def _dummy():
    """K-Radar's line for a frame without a kept detection: 'dummy -1 -1 0 0 0 0 0 0 0 0 0 0 0 0 0'."""
    d = frame(np.zeros((1, 3)), np.zeros((1, 3)), [0.0], names=['dummy'], scores=[0.0])
    d['truncated'][:] = -1
    d['occluded'][:] = -1
    d['bbox'][:] = 0
    return d


def test_conditions_match_kradar_eval_py_and_eval_revised_py(tmp_path):
    gts, dts, conds = _data()
    classes = ['Sedan', 'Bus or Truck']
    evaluator = KRadarEvaluator(classes, ['kradar', 'revised'], ('bev', '3d'), score_threshold=THRESHOLD, grouped=True)
    ours = evaluator.evaluate_gathered(gts, dts, conds)[1]
    # K-Radar's inputs per group, built here independently of our grouping code
    job = {'groups': {}, 'classes': [0, 1]}
    for name in ours['kradar']:
        kind, _, value = name.partition('/')
        key = {'weather': 'climate', 'road': 'road_type', 'time': 'capture_time'}.get(kind)
        idx = [i for i in range(len(gts)) if len(gts[i]['name']) and (key is None or conds[i][key] == value)]
        if len(idx) < 10:
            continue
        g_side, d_side = [], []
        for i in idx:
            g_side.append(_kradar_side(gts[i]))
            kept = dts[i]['score'] > THRESHOLD
            d_side.append(_kradar_side(dts[i], kept) if kept.any() else _dummy())
        job['groups'][name] = (g_side, d_side)
    assert {'total', 'weather/fog', 'road/urban', 'time/night'} <= set(job['groups'])
    official = run_official(job, tmp_path, snapshot_path())
    compared = 0
    for tag, protocol in (('eval', 'kradar'), ('revised', 'revised')):
        for group, per_class in official[tag].items():
            compared += compare_group(ours[protocol][group], per_class, classes, (tag, group))
    assert compared >= 2 * 4 * 2 * 2 * 3
