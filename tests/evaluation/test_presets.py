"""Presets (published settings as rows), the scoring fingerprint on every output, and several confidence
thresholds in one run -- checked against separate single-threshold runs of the same command."""
import json
import pickle

import numpy as np
import pytest

from kradar_plugin.evaluation import cli
from kradar_plugin.evaluation.evaluator import KRadarEvaluator
from kradar_plugin.evaluation.presets import PRESETS, apply, get_preset, label_warning, list_text
from kradar_plugin.evaluation.protocols import PROTOCOLS

from ._data import frame, noisy_dets, random_gt


def test_every_preset_names_a_protocol_of_the_table_and_cites_its_source():
    assert set(PRESETS) == {'kradar-v1', 'kradar-v2', 'asf', '4drmr', 'l4dr', 'echofusion'}
    for preset in PRESETS.values():
        assert preset.protocol in PROTOCOLS and preset.sources and all('@' in s for s in preset.sources)
        assert len(preset.pcd_limit_range) == 6 and len(preset.azimuth_range) == 2
    assert (get_preset('4drmr').protocol, get_preset('kradar-v2').protocol, get_preset('l4dr').protocol) == (
        '4drmr', 'revised', 'kradar')
    text = list_text()
    assert all(name + ':' in text for name in PRESETS) and 'kaist-avelab/4DR-MR @e7aac90' in text
    with pytest.raises(ValueError, match='unknown preset'):
        get_preset('rtnh')


def test_explicit_values_override_and_are_named_only_where_they_differ():
    chosen, overridden = apply('4drmr', protocol='4drmr', classes=('Sedan',), score_thresholds=(0.5,))
    assert chosen['protocol'] == '4drmr' and chosen['classes'] == ('Sedan',) and chosen['score_thresholds'] == (0.5,)
    assert overridden == ['classes=Sedan (preset: Sedan Bus or Truck)',
                          'score_thresholds=0.5 (preset: 0.3 0.5 0.7)']
    assert label_warning('4drmr', ['v2.0']) is None and label_warning('l4dr', ['v2.1']) is None
    assert 'preset 4drmr' in label_warning('4drmr', ['v1.0']) and label_warning('kradar-v1', [None]) is None


def test_evaluator_settings_round_trip_keeps_the_preset_without_inventing_overrides():
    ev = KRadarEvaluator(['Sedan', 'Bus or Truck'], preset='kradar-v2')
    assert ev.protocols[0].name == 'revised' and ev.score_thresholds == (0.3, 0.5, 0.7)
    assert ev.protocols[0].azimuth_range == (-53.0, 53.0) and ev.preset_overrides == []
    again = KRadarEvaluator.from_settings(ev.settings())
    assert again.preset == 'kradar-v2' and again.preset_overrides == [] and again.protocols == ev.protocols
    line = ev.offline_command('r.pkl', 'i.pkl')
    assert '--preset kradar-v2' in line and '--score-threshold 0.3 0.5 0.7' in line
    other = KRadarEvaluator(['Sedan'], preset='kradar-v2')    # a dataset's classes beside the preset
    assert other.preset_overrides == ['classes=Sedan (preset: Sedan Bus or Truck)']
    assert 'preset kradar-v2 with classes=Sedan (preset: Sedan Bus or Truck)' in other.fingerprint()


def _files(tmp_path, n_frames=40, seed=3):
    rs = np.random.RandomState(seed)
    gts, dts = [], []
    for _ in range(n_frames):
        g = random_gt(rs, rs.randint(1, 4))
        gts.append(g)
        dts.append(noisy_dets(rs, g, rs.randint(0, 3)))
    # one Sedan far off to the side (azimuth ~63 deg, y 20 m): outside every preset's region
    far = frame([[-20.0, 0.0, 10.0]], [[4.0, 1.5, 2.0]], [0.0])
    gts.append(far)
    dts.append(frame([[-20.0, 0.0, 10.0]], [[4.0, 1.5, 2.0]], [0.0], scores=[0.9]))
    paths = []
    for name, obj in (('gt.pkl', gts), ('dt.pkl', dts)):
        path = str(tmp_path / name)
        with open(path, 'wb') as f:
            pickle.dump(obj, f)
        paths.append(path)
    return ['--gt-annos', paths[0], '--dt-annos', paths[1], '--eval-types', 'bev', '3d']


def _run(argv, capsys):
    rc = cli.main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out, out.err


def test_cli_preset_several_thresholds_equal_single_runs_and_every_output_has_the_fingerprint(tmp_path, capsys):
    files = _files(tmp_path)
    out, err = _run(files + ['--preset', '4drmr', '--classes', 'Sedan', '--table', 'csv', '--json',
                             str(tmp_path / 'all.json')], capsys)
    assert err.count('kradar-eval: warning:') == 1 and 'preset 4drmr is defined on' in err   # labels unknown
    for t in ('0.3', '0.5', '0.7'):
        assert '=== protocol: 4drmr, detections with score > {} ==='.format(t) in out
        assert '# K-Radar scoring: protocol 4drmr; AP 11 points (every 4th of 41); z_center 0.5;' in out
    scoring = [line for line in out.splitlines() if line.startswith('K-Radar scoring:')]
    assert len(scoring) == 3 and all('preset 4drmr with classes=Sedan (preset: Sedan Bus or Truck)' in line
                                     for line in scoring)
    assert 'region x 0..72, y -16..16, z -2..7.6 m, azimuth -53..53 deg (GT)' in scoring[0]
    assert [line.split('confidence ')[1].split(';')[0] for line in scoring] == [
        'score > 0.3', 'score > 0.5', 'score > 0.7']
    payload = json.load(open(str(tmp_path / 'all.json')))
    assert sorted(payload['score_thresholds']) == ['0.3', '0.5', '0.7'] and payload['preset'] == '4drmr'
    assert payload['metrics'] == payload['score_thresholds']['0.3']['metrics']
    assert payload['groups']['total']['gt'] == {'Sedan': payload['groups']['total']['gt']['Sedan']}
    for t in ('0.3', '0.5', '0.7'):
        _run(files + ['--protocol', '4drmr', '--classes', 'Sedan', '--benchmark', 'v2', '--score-threshold', t,
                      '--json', str(tmp_path / 'one.json')], capsys)
        one = json.load(open(str(tmp_path / 'one.json')))
        mine = payload['score_thresholds'][t]
        # --benchmark v2 applies no azimuth limit on annotation files: the far Sedan is outside y +-16 anyway
        assert mine['groups'] == one['groups'] and mine['metrics'] == one['metrics']
        assert mine['fingerprint'].split('; region')[0] == one['fingerprint'].split('; region')[0]


def test_cli_azimuth_of_a_preset_filters_gt_and_the_fingerprint_says_what_was_applied(tmp_path, capsys):
    files = _files(tmp_path)
    out, _ = _run(files + ['--json', str(tmp_path / 'plain.json')], capsys)
    plain = json.load(open(str(tmp_path / 'plain.json')))
    assert 'region as given (not filtered here)' in plain['fingerprint'] and 'preset none' in plain['fingerprint']
    assert out.rstrip().splitlines()[-2].startswith('K-Radar scoring: protocol legacy;')
    _run(files + ['--preset', 'echofusion', '--conditions', _conditions(tmp_path, 41), '--json',
                  str(tmp_path / 'ef.json')], capsys)
    ef = json.load(open(str(tmp_path / 'ef.json')))
    _run(files + ['--conditions', str(tmp_path / 'c.json'), '--json', str(tmp_path / 'all.json')], capsys)
    every = json.load(open(str(tmp_path / 'all.json')))
    assert 'score_thresholds' not in ef and 'score_threshold' not in ef
    assert 'confidence every detection' in ef['fingerprint'] and 'preset echofusion' in ef['fingerprint']
    assert 'Bus or Truck ignored for Sedan' in ef['fingerprint'] and 'labels unknown' in ef['fingerprint']
    # the far Sedan (azimuth > 50 deg, y > 6.4 m) is out; so are the GT outside the v1 box
    assert ef['groups']['total']['gt']['Sedan'] < every['groups']['total']['gt']['Sedan']


def _conditions(tmp_path, n):
    rows = [{'road_type': 'urban', 'capture_time': 'day', 'climate': 'normal' if i % 2 else 'fog',
             'sequence': str(i // 5)} for i in range(n)]
    path = str(tmp_path / 'c.json')
    with open(path, 'w') as f:
        json.dump(rows, f)
    return path


def test_list_presets_prints_sources(capsys):
    out, _ = _run(['--list-presets'], capsys)
    assert out.count('source: ') >= len(PRESETS) and 'l4dr: L4DR' in out


def test_3d_far_below_bev_names_the_z_options(tmp_path, capsys):
    """Detections 1.2 m too high (what a bottom/centre z mix-up does): BEV perfect, 3D lost -- one note naming
    the options; a correct model gets none."""
    rs = np.random.RandomState(0)
    gts = [random_gt(rs, 3) for _ in range(30)]
    good = [dict(g, score=np.linspace(0.9, 0.5, len(g['name']))) for g in gts]
    shifted = [dict(d, location=d['location'] + np.array([0.0, 1.2, 0.0])) for d in good]
    paths = {}
    for name, obj in (('gt', gts), ('good', good), ('shifted', shifted)):
        paths[name] = str(tmp_path / (name + '.pkl'))
        with open(paths[name], 'wb') as f:
            pickle.dump(obj, f)
    _, err = _run(['--gt-annos', paths['gt'], '--dt-annos', paths['shifted'], '--protocol', 'kradar'], capsys)
    assert err.count('kradar-eval: note:') == 1 and '--dt-z-is-bottom' in err and '--box-convention' in err
    _, err = _run(['--gt-annos', paths['gt'], '--dt-annos', paths['good'], '--protocol', 'kradar'], capsys)
    assert 'note:' not in err


def test_mmcv1_evaluation_dict_takes_a_preset_and_logs_the_fingerprint(tmp_path, caplog, capsys):
    """The 1.x dataset ``evaluate`` (the mixin, on a plain class: no mmcv needed) with ``preset=`` as an
    ``evaluation`` dict gives it: the preset's protocol and thresholds, the dataset's classes (named as a
    difference), one scoring line in the log."""
    import logging
    from .test_conditions_paths import _infos, mixin_dataset
    infos, results, _ = _infos()
    dataset = mixin_dataset(infos, tmp_path)

    with caplog.at_level(logging.INFO, logger='kradar_plugin'):
        flat = dataset.evaluate(results, preset='4drmr', score_threshold=[0.5, 0.7])
    # mmcv's print_log (stdout without a logger) where mmcv is installed, else the 'kradar_plugin' logger
    logged = [r.getMessage() for r in caplog.records] + capsys.readouterr().out.splitlines()
    lines = [line for line in logged if line.startswith('pts_bbox: K-Radar scoring:')]
    assert len(lines) == 1 and lines[0].startswith('pts_bbox: K-Radar scoring: protocol 4drmr;')
    assert 'confidence score > 0.5' in lines[0] and 'labels unknown' in lines[0]
    assert 'preset 4drmr with classes=Sedan (preset: Sedan Bus or Truck), score_thresholds=0.5 0.7' in lines[0]
    assert any('(4drmr protocol)' in line for line in logged)
    direct = KRadarEvaluator(['Sedan'], '4drmr', ('bbox', 'bev', '3d'),
                             pcd_limit_range=get_preset('4drmr').pcd_limit_range, azi_limit_range=(-53, 53), score_threshold=0.5, box_convention='mmdet3d<1.0')
    direct.process(infos, results)
    direct.evaluate()
    assert flat == direct.flat_metrics('pts_bbox')
