"""K-Radar's paper tables: the ``kradar`` protocol, the frame rule on the annotation path, condition groups,
confidence thresholds, bootstrap intervals, comparisons, tables and safe loading -- against values derived
by hand (KITTI 41-point curves: with n GT, 11-of-41 reads points 0, 4, ..., 40 and all41 all 41 points)."""
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.evaluation import kradar_eval

from ._data import evaluated, frame, noisy_dets, perfect, random_gt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEDAN, BUS = [4.5, 1.6, 1.9], [9.0, 3.0, 2.6]


def _sedan_and_bus():
    """One Sedan GT and one Bus or Truck GT; a 'Sedan' detection on the bus (0.9) above one on the sedan
    (0.8)."""
    gt = frame([[0, 0, 20], [5, 0, 40]], [SEDAN, BUS], [0.0, 0.0], names=['Sedan', 'Bus or Truck'])
    dt = frame([[5, 0, 40], [0, 0, 20]], [BUS, SEDAN], [0.0, 0.0], names=['Sedan', 'Sedan'], scores=[0.9, 0.8])
    return [gt], [dt]


def test_kradar_counts_a_sedan_detection_on_a_bus_as_false_positive_legacy_ignores_it():
    gts, dts = _sedan_and_bus()
    legacy, kradar, revised = evaluated(gts, dts, ['Sedan'], ['legacy', 'kradar', 'revised'], iou_mode='easy').evaluations
    # legacy (EchoFusion): the bus GT is ignored for Sedan, the detection on it neither TP nor FP: precision
    # 1 at recall 1, one of 11 points -> 100/11. kradar (eval.py) and revised: it is a FP ranked first:
    # precision 1/2 -> 50/11, and 50/41 over all 41 points
    assert legacy.ap['bev'][0, 0, 0] == pytest.approx(100 / 11.)
    assert kradar.ap['bev'][0, 0, 0] == pytest.approx(50 / 11.)
    assert revised.ap['bev'][0, 0, 0] == pytest.approx(50 / 41.)
    # Bus or Truck itself: no detection labelled so -> 0 everywhere
    assert evaluated(gts, dts, ['Bus or Truck'], 'kradar', iou_mode='easy').evaluations[0].ap['bev'][0, 0, 0] == 0.0


def _with_empty_frame():
    gt = frame([[0, 0, 20]], [SEDAN], [0.0])
    empty = frame(np.zeros((0, 3)), np.zeros((0, 3)), [])
    fp = frame([[0, 0, 30]], [SEDAN], [0.0], scores=[0.95])
    return [gt, empty], [perfect(gt, [0.9]), fp]


def test_frame_rule_on_the_annotation_path():
    gts, dts = _with_empty_frame()
    ruled = evaluated(gts, dts, ['Sedan'], ['legacy', 'kradar', 'revised', 'fixed'], iou_mode='easy').evaluations
    # legacy/kradar/revised drop the frame without GT with its detection: precision 1 -> 100/11, 100/41;
    # fixed keeps it: the FP (0.95) ranks above the TP, R40 precision 1/2 at every recall -> 50
    assert [e.n_frames for e in ruled] == [1, 1, 1, 2]
    assert [round(float(e.ap['bev'][0, 0, 0]), 4) for e in ruled] == [
        round(100 / 11., 4), round(100 / 11., 4), round(100 / 41., 4), 50.0]
    # EchoFusion's drop-in evaluates what it is given (its format_anno already dropped such frames)
    assert float(kradar_eval(gts, dts, ['Sedan'], 'easy')[1]['kradar/Sedan_BEV_easy_strict']) == pytest.approx(
        50 / 11.)


def test_score_threshold_is_strict():
    gt = frame([[0, 0, 20]], [SEDAN], [0.0])
    dt = frame([[0, 0, 20], [0, 0, 50]], [SEDAN, SEDAN], [0.0, 0.0], scores=[0.3, 0.5])
    at = evaluated([gt], [dt], ['Sedan'], 'legacy', iou_mode='easy', score_threshold=0.3).evaluations[0]
    below = evaluated([gt], [dt], ['Sedan'], 'legacy', iou_mode='easy', score_threshold=0.29).evaluations[0]
    # score > 0.3 drops the TP (exactly 0.3): AP 0; > 0.29 keeps both: the FP (0.5) first, precision 1/2
    assert at.ap['bev'][0, 0, 0] == 0.0
    assert below.ap['bev'][0, 0, 0] == pytest.approx(50 / 11.)


def _conditioned(n_frames=60, seed=0):
    rs = np.random.RandomState(seed)
    weathers = ['normal', 'fog', 'Rain ', 'sleet\n']
    gts, dts, dts_b, conds = [], [], [], []
    for i in range(n_frames):
        g = random_gt(rs, rs.randint(0, 4))
        gts.append(g)
        dts.append(noisy_dets(rs, g, 2))
        dts_b.append(noisy_dets(rs, g, 1, keep=0.9))
        conds.append({'road_type': 'urban' if i % 3 else 'Highway', 'capture_time': 'night\n' if i % 2 else 'day',
                      'climate': weathers[(i // 5) % 4], 'sequence': str(i // 5)})
    return gts, dts, dts_b, conds


def test_each_group_equals_an_evaluation_of_its_frames_alone():
    """Groups gather overlaps computed once; an independent evaluation of the group's frames (overlaps
    computed afresh, frames without GT removed by hand) gives the same numbers."""
    gts, dts, _, conds = _conditioned()
    groups = evaluated(gts, dts, ['Sedan', 'Bus or Truck'], 'kradar', conds, score_threshold=0.2).groups['kradar']
    assert list(groups)[:5] == ['total', 'weather/normal', 'weather/fog', 'weather/rain', 'weather/sleet']
    assert {'road/urban', 'road/highway', 'time/day', 'time/night'} <= set(groups)
    assert 'weather/heavysnow' not in groups                  # no frame: no group
    for name in ('total', 'weather/fog', 'road/highway', 'time/night'):
        kind, _, value = name.partition('/')
        key = {'weather': 'climate', 'road': 'road_type', 'time': 'capture_time'}.get(kind)
        idx = [i for i in range(len(gts)) if len(gts[i]['name']) and (
            key is None or conds[i][key].strip().lower() == value)]
        alone = evaluated([gts[i] for i in idx], [dts[i] for i in idx], ['Sedan'], 'kradar',
                          score_threshold=0.2).evaluations[0]
        assert groups[name]['frames'] == len(idx)
        assert groups[name]['gt']['Sedan'] == sum(len(gts[i]['name']) for i in idx)
        for metric in ('bev', '3d'):
            for j, iou in enumerate((0.3, 0.5, 0.7)):
                assert groups[name]['metrics']['Sedan/{}@{:g}'.format(metric, iou)] == pytest.approx(
                    float(alone.ap[metric][0, 0, j]), abs=1e-9), (name, metric, iou)
        # no Bus or Truck GT anywhere: its values are null, not 0
        assert groups[name]['gt']['Bus or Truck'] == 0
        assert groups[name]['metrics']['Bus or Truck/bev@0.3'] is None


def test_bootstrap_is_reproducible_and_comparison_is_paired():
    gts, dts, dts_b, conds = _conditioned()
    one = evaluated(gts, dts, ['Sedan'], 'legacy', conds, dts_b, bootstrap=15, seed=3).groups['legacy']
    two = evaluated(gts, dts, ['Sedan'], 'legacy', conds, dts_b, bootstrap=15, seed=3).groups['legacy']
    other = evaluated(gts, dts, ['Sedan'], 'legacy', conds, bootstrap=15, seed=4).groups['legacy']
    assert one == two and one['total']['ci95'] != other['total']['ci95']
    for entry in one.values():
        for key, value in entry['metrics'].items():
            assert entry['delta'][key] == pytest.approx(entry['metrics_b'][key] - value)
            lo, hi = entry['ci95'][key]
            assert 0.0 <= lo <= hi <= 100.0
    # the same model against itself: every paired difference is 0, so is its interval
    same = evaluated(gts, dts, ['Sedan'], 'legacy', conds, dts, bootstrap=5).groups['legacy']
    assert all(v == 0.0 for v in same['total']['delta'].values())
    assert all(v == [0.0, 0.0] for v in same['total']['delta_ci95'].values())


def _cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0')
    return subprocess.run([sys.executable, '-m', 'kradar_plugin.evaluation'] + args, cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def test_cli_conditions_table_json_and_safe_loading(tmp_path):
    gts, dts, dts_b, conds = _conditioned()
    for name, obj in (('gt.pkl', gts), ('dt.pkl', dts), ('b.pkl', dts_b)):
        with open(str(tmp_path / name), 'wb') as f:
            pickle.dump(obj, f)
    with open(str(tmp_path / 'cond.json'), 'w') as f:
        json.dump(conds, f)
    out = str(tmp_path / 'm.json')
    proc = _cli(['--gt-annos', 'gt.pkl', '--dt-annos', 'dt.pkl', '--protocol', 'kradar', '--conditions',
                 'cond.json', '--score-threshold', '0.3', '--table', 'markdown', '--iou-mode', 'easy', '--json', out,
                 '--compare-dt-annos', 'b.pkl'], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '| Class | Total | Normal | Overcast | Fog | Rain | Sleet | LightSnow | HeavySnow |' in proc.stdout
    sedan_3d = [l for l in proc.stdout.splitlines() if l.startswith('| Sedan |')][0].split('|')[2:-1]
    assert sedan_3d[2].strip() == 'N/A' and sedan_3d[6].strip() == 'N/A'   # no overcast / lightsnow frame
    payload = json.load(open(out))
    groups = evaluated(gts, dts, ['Sedan'], 'kradar', conds, dts_b, score_threshold=0.3,
                       iou_mode='easy').groups['kradar']
    assert payload['protocol'] == 'kradar' and payload['score_threshold'] == 0.3
    assert payload['groups'] == json.loads(json.dumps(groups))
    assert payload['metrics'] == payload['groups']['total']['metrics']
    assert '(B - A)' in proc.stdout
    # a pickle that needs a class of ours is refused, naming the class, unless trusted
    with open(str(tmp_path / 'evil.pkl'), 'wb') as f:
        pickle.dump([dict(gts[0], extra=np.ma.masked_array([1.0]))], f)
    refused = _cli(['--gt-annos', 'evil.pkl', '--dt-annos', 'dt.pkl'], tmp_path)
    assert refused.returncode == 2 and 'refused to load numpy.ma.core' in refused.stderr, refused.stderr
    assert '--trust-pickle' in refused.stderr
    latex = _cli(['--gt-annos', 'gt.pkl', '--dt-annos', 'dt.pkl', '--conditions', 'cond.json', '--table', 'latex',
                  '--iou-mode', 'mod'], tmp_path)
    assert latex.returncode == 0 and '\\begin{tabular}' in latex.stdout and 'AP3D @ IoU 0.5' in latex.stdout
