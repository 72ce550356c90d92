"""Conditions, benchmarks, bootstrap weights and safe loading on every input path, against hand-derived
values or an independent evaluation (the frames listed out and evaluated afresh)."""
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.evaluation.engine import EventTable, prepare
from kradar_plugin.evaluation.protocols import get_protocol
from kradar_plugin.loading import safe_pickle

from ._data import evaluated, frame, noisy_dets, perfect, random_gt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEDAN = [4.5, 1.6, 1.9]


def _cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0')
    return subprocess.run([sys.executable, '-m', 'kradar_plugin.evaluation'] + args, cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def _dump(path, obj, protocol=pickle.HIGHEST_PROTOCOL):
    with open(str(path), 'wb') as f:
        pickle.dump(obj, f, protocol=protocol)
    return str(path)


def test_benchmark_region_hand_case(tmp_path):
    """v1 (y within +-6.4) drops the frame whose only GT is at y = 10 and the false positive at y = 10;
    v2 (y within +-16) keeps both."""
    f0_gt = frame([[0, 0, 20]], [SEDAN], [0.0])
    f0_dt = frame([[0, 0, 20], [10, 0, 30]], [SEDAN, SEDAN], [0.0, 0.0], scores=[0.8, 0.9])
    f1_gt = frame([[10, 0, 40]], [SEDAN], [0.0])
    f1_dt = perfect(f1_gt, [0.7])
    args = ['--gt-annos', _dump(tmp_path / 'gt.pkl', [f0_gt, f1_gt]), '--dt-annos',
            _dump(tmp_path / 'dt.pkl', [f0_dt, f1_dt]), '--classes', 'Sedan', '--eval-types', 'bev', '--iou-mode',
            'easy', '--protocol', 'all']
    out = {}
    for bench in ('v1', 'v2'):
        proc = _cli(args + ['--benchmark', bench, '--json', str(tmp_path / (bench + '.json'))], tmp_path)
        assert proc.returncode == 0, proc.stderr
        out[bench] = json.load(open(str(tmp_path / (bench + '.json'))))['metrics']
    # v1: one GT, its TP alone: 11-of-41 reads precision 1 at point 0 -> 100/11; all41 -> 100/41
    assert out['v1']['kradar']['Sedan/bev@0.3'] == pytest.approx(100 / 11.)
    assert out['v1']['revised']['Sedan/bev@0.3'] == pytest.approx(100 / 41.)
    # v2: 2 GT; thresholds 0.8 (FP 0.9 above: precision 1/2) and 0.7 (2/3); interpolated: 2/3 at points 0, 1
    assert out['v2']['kradar']['Sedan/bev@0.3'] == pytest.approx(100 * (2 / 3.) / 11)
    assert out['v2']['revised']['Sedan/bev@0.3'] == pytest.approx(100 * (4 / 3.) / 41)


def test_bootstrap_weights_equal_the_repeated_frames_evaluated_afresh():
    """A bootstrap draw repeats frames; the event table weights them. Listing the repeated frames out and
    evaluating them from scratch gives the same AP (every protocol, a score threshold, two classes)."""
    rs = np.random.RandomState(7)
    gts, dts = [], []
    for i in range(30):
        g = random_gt(rs, 0 if i % 7 == 3 else rs.randint(1, 4))
        g['name'] = np.array(['Bus or Truck' if rs.rand() < 0.3 else 'Sedan' for _ in g['name']])
        d = noisy_dets(rs, g, rs.randint(0, 3))
        d['name'] = np.array(['Bus or Truck' if rs.rand() < 0.3 else 'Sedan' for _ in d['name']])
        gts.append(g)
        dts.append(d)
    draw = rs.randint(0, 30, 45)
    classes = ['Sedan', 'Bus or Truck']
    for protocol in ('legacy', 'kradar', 'revised', 'fixed'):
        proto = get_protocol(protocol)
        table = EventTable(proto, prepare(gts, dts, [proto], ('bev', '3d')), classes, ('bev', '3d'))
        table.match()
        weighted = table.read(table.frame_weights(draw), [0.25])[0]
        afresh = evaluated([gts[i] for i in draw], [dts[i] for i in draw], classes, protocol,
                           score_threshold=0.25).evaluations[0]
        for metric in ('bev', '3d'):
            np.testing.assert_allclose(weighted.ap[metric], afresh.ap[metric], rtol=0, atol=1e-9)
        assert weighted.num_gt == afresh.num_gt


def test_a_group_of_one_frame_and_fixed_keeps_frames_without_gt():
    gt = frame([[0, 0, 20]], [SEDAN], [0.0])
    empty = frame(np.zeros((0, 3)), np.zeros((0, 3)), [])
    fp = frame([[0, 0, 30]], [SEDAN], [0.0], scores=[0.95])
    conds = [{'road_type': 'urban', 'capture_time': 'day', 'climate': 'fog'},
             {'road_type': 'highway', 'capture_time': 'night', 'climate': 'rain'}]
    kradar = evaluated([gt, empty], [perfect(gt, [0.9]), fp], ['Sedan'], 'kradar', conds,
                       iou_mode='easy').groups['kradar']
    # the rain frame has no GT: dropped with its detection, so its groups do not exist
    assert sorted(kradar) == ['road/urban', 'time/day', 'total', 'weather/fog']
    assert kradar['weather/fog']['frames'] == 1 and kradar['weather/fog']['gt'] == {'Sedan': 1}
    assert kradar['weather/fog']['metrics']['Sedan/bev@0.3'] == pytest.approx(100 / 11.)
    fixed = evaluated([gt, empty], [perfect(gt, [0.9]), fp], ['Sedan'], 'fixed', conds, iou_mode='easy').groups['fixed']
    # fixed keeps it: a group without GT has null metrics; the FP (0.95) above the TP halves total's precision
    assert fixed['weather/rain']['frames'] == 1 and fixed['weather/rain']['gt'] == {'Sedan': 0}
    assert fixed['weather/rain']['metrics']['Sedan/bev@0.3'] is None
    assert fixed['total']['metrics']['Sedan/bev@0.3'] == pytest.approx(50.0)


def _infos(n_frames=40, seed=2):
    """EchoFusion-style infos (conditions with EchoFusion's trailing newline on climate; label_file
    'seq,label') and 0.17.3-style results of a noisy model."""
    rs = np.random.RandomState(seed)
    infos, results, results_b = [], [], []
    for i in range(n_frames):
        g = random_gt(rs, rs.randint(1, 4))
        seq = i // 5
        infos.append({'sample_idx': i, 'road_type': 'urban', 'capture_time': 'day' if seq % 2 else 'night',
                      'climate': ('normal', 'fog')[seq // 4] + '\n', 'annos': {
                          'name': g['name'], 'location': g['location'] * np.array([-1.0, -1.0, 1.0]),
                          'dimensions': g['dimensions'][:, [2, 1, 0]], 'rotation_y': g['rotation_y'],
                          'label_file': '{},{:05d}.txt'.format(seq + 1, i)}})
        for out, keep in ((results, 0.8), (results_b, 0.95)):
            d = noisy_dets(rs, g, 1, keep=keep)
            loc, dims = d['location'], d['dimensions']
            boxes = np.c_[loc[:, 2], loc[:, 0], loc[:, 1], dims[:, 0], dims[:, 2], dims[:, 1], d['rotation_y']]
            out.append({'boxes_3d': boxes, 'scores_3d': d['score'], 'labels_3d': np.zeros(len(boxes), dtype=int)})
    return infos, results, results_b


def test_infos_path_conditions_sequences_bootstrap_and_comparison(tmp_path):
    infos, results, results_b = _infos()
    base = ['--infos', _dump(tmp_path / 'infos.pkl', infos, 2), '--results', _dump(tmp_path / 'r.pkl', results),
            '--box-convention', 'mmdet3d<1.0', '--protocol', 'kradar', '--eval-types', 'bev', '3d',
            '--score-threshold', '0.3']
    proc = _cli(base + ['--table', 'csv', '--bootstrap', '20', '--seed', '5', '--compare-results',
                        _dump(tmp_path / 'b.pkl', results_b), '--json', str(tmp_path / 'a.json')], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert 'Class,Total,Normal,Overcast,Fog,Rain,Sleet,LightSnow,HeavySnow' in proc.stdout
    groups = json.load(open(str(tmp_path / 'a.json')))['groups']
    # conditions read from the infos, stripped: normal (sequences 1-4), fog (5-8); every frame has GT
    assert sorted(groups) == ['road/urban', 'time/day', 'time/night', 'total', 'weather/fog', 'weather/normal']
    assert groups['weather/normal']['frames'] == groups['weather/fog']['frames'] == 20
    for entry in groups.values():
        for key, value in entry['metrics'].items():
            assert entry['delta'][key] == pytest.approx(entry['metrics_b'][key] - value)
            lo, hi = entry['ci95'][key]
            assert lo <= hi
    # the same seed, the same intervals; an explicit --conditions file with the same rows, the same groups
    again = _cli(base + ['--bootstrap', '20', '--seed', '5', '--json', str(tmp_path / 'b.json')], tmp_path)
    assert again.returncode == 0, again.stderr
    b = json.load(open(str(tmp_path / 'b.json')))['groups']
    assert all(b[g]['ci95'] == groups[g]['ci95'] for g in groups)
    rows = [{'road_type': 'Urban ', 'capture_time': i['capture_time'], 'climate': i['climate'],
             'sequence': i['annos']['label_file'].split(',')[0]} for i in infos]
    with open(str(tmp_path / 'c.json'), 'w') as f:
        json.dump(rows, f)
    explicit = _cli(base + ['--conditions', 'c.json', '--bootstrap', '20', '--seed', '5', '--json',
                            str(tmp_path / 'c_out.json')], tmp_path)
    assert explicit.returncode == 0, explicit.stderr
    assert json.load(open(str(tmp_path / 'c_out.json')))['groups'] == b


def test_bootstrap_resamples_whole_sequences():
    """A group made of one sequence would draw that sequence every time (a zero-width 'interval'): it gets
    no interval (null) and its sequence count, printed as '(1 seq)' in every table format; frames without a
    sequence are resampled one by one and vary (``resampled_frames``, not ``sequences``)."""
    from kradar_plugin.evaluation.tables import render
    rs = np.random.RandomState(1)
    gts = [random_gt(rs, 3) for _ in range(12)]
    dts = [noisy_dets(rs, g, 2) for g in gts]
    conds = [{'road_type': 'urban', 'capture_time': 'day', 'climate': 'fog' if i < 6 else 'rain',
              'sequence': 'a' if i < 6 else ''} for i in range(12)]
    groups = evaluated(gts, dts, ['Sedan'], 'revised', conds, bootstrap=30, seed=2).groups['revised']
    fog = groups['weather/fog']
    assert fog['sequences'] == 1 and set(fog['ci95']) == set(fog['metrics'])
    assert all(v is None for v in fog['ci95'].values())
    rain = groups['weather/rain']     # no sequence known: its 6 frames are resampled, and named as frames
    assert rain['sequences'] is None and rain['resampled_frames'] == 6
    assert any(rain['ci95'][k][0] < rain['ci95'][k][1] for k in rain['metrics'])
    for fmt in ('markdown', 'latex', 'csv'):
        text = render(groups, ['Sedan'], [0.5], fmt)
        assert '{:.2f} (1 seq)'.format(fog['metrics']['Sedan/bev@0.5']) in text
        assert '{:.2f} ['.format(rain['metrics']['Sedan/bev@0.5']) in text


def _numpy_1_names(data):
    return data.replace(b'numpy._core.', b'numpy.core.')


def _numpy_2_names(data):
    return data.replace(b'numpy.core.', b'numpy._core.')


@pytest.mark.parametrize('layout', [_numpy_1_names, _numpy_2_names])
def test_safe_loading_reads_numpy_1_and_2_pickles(tmp_path, layout):
    """Protocol-2 pickles spell module names as text: rewritten to numpy 1.x's (numpy.core) or 2.x's
    (numpy._core) layout, both load with the installed numpy, arrays and scalars intact."""
    obj = [{'name': np.array(['Sedan']), 'location': np.arange(3.0).reshape(1, 3), 'score': np.float32(0.5),
            'n': np.int64(3), 'label_file': u'1,00001.txt', 'raw': b'x'}]
    data = layout(pickle.dumps(obj, protocol=2))
    path = tmp_path / 'p.pkl'
    path.write_bytes(data)
    with open(str(path), 'rb') as f:
        back = safe_pickle.load(f)
    assert back[0]['location'].tolist() == [[0.0, 1.0, 2.0]] and back[0]['score'] == np.float32(0.5)
    assert str(back[0]['name'][0]) == 'Sedan' and back[0]['n'] == 3 and back[0]['raw'] == b'x'


def test_safe_loading_refuses_other_classes_by_name(tmp_path):
    import collections
    path = tmp_path / 'p.pkl'
    path.write_bytes(pickle.dumps([collections.OrderedDict(a=1), np.ma.masked_array([1.0])]))
    with open(str(path), 'rb') as f:
        with pytest.raises(safe_pickle.RefusedPickleError, match=r'refused to load numpy\.ma\.core\.'):
            safe_pickle.load(f)
    with open(str(path), 'rb') as f:
        assert safe_pickle.load(f, trusted=True)[0] == {'a': 1}


def test_overview_png_gains_the_per_weather_panel(tmp_path):
    pytest.importorskip('matplotlib')
    rs = np.random.RandomState(4)
    gts = [random_gt(rs, 2) for _ in range(12)]
    dts = [noisy_dets(rs, g, 1) for g in gts]
    conds = [{'road_type': 'urban', 'capture_time': 'day', 'climate': ('fog', 'rain')[i % 2],
              'sequence': str(i // 3)} for i in range(12)]
    args = ['--gt-annos', _dump(tmp_path / 'gt.pkl', gts), '--dt-annos', _dump(tmp_path / 'dt.pkl', dts),
            '--eval-types', 'bev', '3d', '--protocol', 'kradar']
    sizes = {}
    for name, extra in (('plain', []), ('cond', ['--conditions', _dump_json(tmp_path / 'c.json', conds),
                                                 '--bootstrap', '3'])):
        proc = _cli(args + extra + ['--plot-dir', str(tmp_path / name)], tmp_path)
        assert proc.returncode == 0, proc.stderr
        with open(str(tmp_path / name / 'kradar_Sedan_overview.png'), 'rb') as f:
            header = f.read(24)
        sizes[name] = int.from_bytes(header[16:20], 'big')        # PNG IHDR width
    # two curve panels, plus the per-weather bar panel: 3/2 as wide
    assert sizes['cond'] * 2 == sizes['plain'] * 3


def _dump_json(path, obj):
    with open(str(path), 'w') as f:
        json.dump(obj, f)
    return str(path)


def test_kradar_keywords_name_the_same_classes(tmp_path):
    """Annotations written with K-Radar's text-file keywords ('sed', 'bus') evaluate as the full names, and
    the keywords are accepted as class names; a conditions info pickle works like a JSON file."""
    rs = np.random.RandomState(8)
    gts, dts = [], []
    for _ in range(10):
        g = random_gt(rs, 3)
        g['name'] = np.array(['Sedan', 'Bus or Truck', 'Sedan'])
        d = noisy_dets(rs, g, 1)
        d['name'] = np.array(['Sedan' if rs.rand() < 0.7 else 'Bus or Truck' for _ in d['name']])
        gts.append(g)
        dts.append(d)
    short = {'Sedan': 'sed', 'Bus or Truck': 'bus'}
    kgts = [dict(g, name=np.array([short[n] for n in g['name']])) for g in gts]
    kdts = [dict(d, name=np.array([short[n] for n in d['name']])) for d in dts]
    full = evaluated(gts, dts, ['Sedan', 'Bus or Truck'], ['kradar', 'legacy']).evaluations
    keyed = evaluated(kgts, kdts, ['sed', 'bus'], ['kradar', 'legacy']).evaluations
    for a, b in zip(full, keyed):
        assert a.classes == b.classes == ('Sedan', 'Bus or Truck')
        for metric in ('bev', '3d'):
            np.testing.assert_array_equal(a.ap[metric], b.ap[metric])
    infos = [{'road_type': 'urban', 'capture_time': 'day', 'climate': 'fog\n' if i < 5 else 'rain\n',
              'annos': {'label_file': '{},x.txt'.format(i // 5)}} for i in range(10)]
    args = ['--gt-annos', _dump(tmp_path / 'gt.pkl', kgts), '--dt-annos', _dump(tmp_path / 'dt.pkl', kdts),
            '--classes', 'sed', '--protocol', 'kradar', '--json', str(tmp_path / 'm.json')]
    proc = _cli(args + ['--conditions', _dump(tmp_path / 'infos.pkl', infos)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    groups = json.load(open(str(tmp_path / 'm.json')))['groups']
    assert sorted(groups) == ['road/urban', 'time/day', 'total', 'weather/fog', 'weather/rain']
    direct = evaluated(gts, dts, ['Sedan'], 'kradar', [
        {'road_type': 'urban', 'capture_time': 'day', 'climate': i['climate']} for i in infos],
        eval_types=('bbox', 'bev', '3d')).groups['kradar']
    assert groups['weather/rain']['metrics'] == pytest.approx(direct['weather/rain']['metrics'])


@pytest.mark.parametrize('protocol', ['kradar', 'fixed'])
def test_several_thresholds_at_once_equal_one_at_a_time(protocol):
    rs = np.random.RandomState(11)
    gts = [random_gt(rs, rs.randint(0, 4)) for _ in range(24)]
    dts = [noisy_dets(rs, g, 2) for g in gts]
    dts_b = [noisy_dets(rs, g, 1) for g in gts]
    conds = [{'road_type': 'urban', 'capture_time': 'day', 'climate': ('fog', 'rain')[i % 2],
              'sequence': str(i // 4)} for i in range(24)]
    thresholds = [None, 0.3, 0.7]
    together = [g[protocol] for g in evaluated(gts, dts, ['Sedan'], protocol, conds, dts_b, score_threshold=thresholds,
                                               bootstrap=6, seed=1).groups_at]
    for threshold, groups in zip(thresholds, together):
        assert groups == evaluated(gts, dts, ['Sedan'], protocol, conds, dts_b, score_threshold=threshold,
                                   bootstrap=6, seed=1).groups[protocol]
    assert together[0]['total']['metrics'] != together[2]['total']['metrics']


def mixin_dataset(infos, results_dir):
    """The mmcv 1.x dataset evaluation (``KRadarEvalMixin``) on a plain class over ``infos``: no mmcv needed."""
    from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import KRadarEvalMixin

    class Dataset(KRadarEvalMixin):
        CLASSES = ('Sedan',)
        data_infos = infos
        box_convention = 'mmdet3d<1.0'
    dataset = Dataset()
    dataset.results_dir = str(results_dir)
    return dataset
