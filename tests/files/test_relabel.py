"""Relabelling saved predictions (``--kradar-root --label-version``), the benchmark/label-version warning and
``kradar-create-data`` as a console script: scoring a run's results against v1.0 infos relabelled to v2.0
gives exactly what infos converted from the v2.0 labels give."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.evaluation.cli import main as eval_main
from kradar_plugin.files.create_data import main as create_data_main
from kradar_plugin.evaluation.evaluator import KRadarEvaluator
from kradar_plugin.evaluation.label_versions import LabelVersionWarning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope='module')
def converted(demo_tree, tmp_path_factory):
    out = tmp_path_factory.mktemp('infos')
    paths = {}
    for version in ('v1.0', 'v2.0'):
        rc = create_data_main(['--root-path', demo_tree['root'], '--out-dir', str(out / version),
                                          '--split-dir', demo_tree['split_dir'], '--label-version', version,
                                          '--labels-dir', demo_tree['labels_dir'], '--no-progress'])
        assert rc == 0
        paths[version] = str(out / version / 'kradar_infos_test.pkl')
    with open(paths['v2.0'], 'rb') as f:
        infos = pickle.load(f)
    rs = np.random.RandomState(0)
    results = []
    for info in infos:      # noisy copies of the v2.0 boxes as LiDAR boxes (x, y, z, l, w, h, yaw)
        a = info['annos']
        loc, dims = a['location'].reshape(-1, 3), a['dimensions'].reshape(-1, 3)
        boxes = np.stack([loc[:, 2], -loc[:, 0], -loc[:, 1], dims[:, 2], dims[:, 0], dims[:, 1],
                          a['rotation_y'].reshape(-1)], axis=1) + rs.normal(0, 0.2, (len(loc), 7))
        results.append({'boxes_3d': boxes.astype(np.float32), 'scores_3d': rs.uniform(0.2, 1, len(loc)).astype(
            np.float32), 'labels_3d': np.zeros(len(loc), dtype=np.int64)})
    paths['results'] = str(out / 'results.pkl')
    with open(paths['results'], 'wb') as f:
        pickle.dump(results, f)
    return paths


def _cli(args, capsys):
    rc = eval_main(args + ['--box-convention', 'mmdet3d>=1.0', '--no-progress'])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_relabelled_equals_converted_from_v2(converted, demo_tree, capsys):
    common = ['--results', converted['results'], '--protocol', 'all', '--classes', 'Sedan', 'Bus or Truck',
              '--score-threshold', '0.3', '--table', 'csv']
    rc, direct, err = _cli(['--infos', converted['v2.0']] + common, capsys)
    assert rc == 0, err
    rc, relabelled, err = _cli(['--infos', converted['v1.0'], '--kradar-root', demo_tree['root'], '--label-version',
                                'v2.0', '--labels-dir', demo_tree['labels_dir']] + common, capsys)
    assert rc == 0, err
    assert relabelled == direct
    rc, v1, _ = _cli(['--infos', converted['v1.0']] + common, capsys)
    assert rc == 0 and v1 != direct      # the v2.0 labels differ from v1.0 (refined boxes, extra boxes)


def test_benchmark_v2_warns_once_on_other_labels(converted, demo_tree, capsys):
    base = ['--results', converted['results'], '--protocol', 'kradar', '--benchmark', 'v2']
    rc, _, err = _cli(['--infos', converted['v1.0']] + base, capsys)
    assert rc == 0 and err.count('kradar-eval: warning:') == 1 and 'labels are v1.0' in err
    assert 'kradar-create-data --label-version v2.0' in err
    rc, _, err = _cli(['--infos', converted['v2.0']] + base, capsys)
    assert rc == 0 and 'warning' not in err
    rc, _, err = _cli(['--infos', converted['v1.0'], '--kradar-root', demo_tree['root'], '--label-version', 'v2.0',
                       '--labels-dir', demo_tree['labels_dir']] + base, capsys)
    assert rc == 0 and 'warning' not in err
    with open(converted['v1.0'], 'rb') as f:
        infos = pickle.load(f)
    for info in infos:
        info.pop('label_version')      # EchoFusion's own infos record no version
    with open(converted['results'], 'rb') as f:
        results = pickle.load(f)
    evaluator = KRadarEvaluator(['Sedan'], 'kradar', benchmark='v2')
    evaluator.process(infos, results)
    with pytest.warns(LabelVersionWarning, match='unknown version'):
        evaluator.evaluate()


def test_evaluator_relabel_keywords_and_offline_command(converted, demo_tree):
    with open(converted['v1.0'], 'rb') as f:
        infos = pickle.load(f)
    with open(converted['results'], 'rb') as f:
        results = pickle.load(f)
    keywords = dict(kradar_root=demo_tree['root'], label_version='v2.0', labels_dir=demo_tree['labels_dir'])
    evaluator = KRadarEvaluator(['Sedan'], 'kradar', box_convention='mmdet3d>=1.0', **keywords)
    evaluator.process(infos, results)
    relabelled = evaluator.evaluate()
    with open(converted['v2.0'], 'rb') as f:
        direct_infos = pickle.load(f)
    direct = KRadarEvaluator(['Sedan'], 'kradar', box_convention='mmdet3d>=1.0')
    direct.process(direct_infos, results)
    assert relabelled == direct.evaluate()
    assert KRadarEvaluator.from_settings(evaluator.settings()).settings() == evaluator.settings()
    command = evaluator.offline_command('r.pkl', 'i.pkl')
    assert '--kradar-root {} --label-version v2.0 --labels-dir {}'.format(demo_tree['root'],
                                                                          demo_tree['labels_dir']) in command


def test_frame_that_cannot_be_joined_is_named(converted, demo_tree, tmp_path, capsys):
    with open(converted['v1.0'], 'rb') as f:
        infos = pickle.load(f)
    infos[5]['annos']['label_file'] = '3,99999_99999.txt'
    path = str(tmp_path / 'infos.pkl')
    with open(path, 'wb') as f:
        pickle.dump(infos, f)
    rc, _, err = _cli(['--infos', path, '--results', converted['results'], '--kradar-root', demo_tree['root'],
                       '--label-version', 'v2.1', '--labels-dir', demo_tree['labels_dir']], capsys)
    assert rc == 2 and err.count('\n') == 1 and 'frame 5' in err and '99999_99999.txt' in err
    del infos[5]['annos']['label_file']
    with open(path, 'wb') as f:
        pickle.dump(infos, f)
    rc, _, err = _cli(['--infos', path, '--results', converted['results'], '--kradar-root', demo_tree['root']],
                      capsys)
    assert rc == 2 and "frame 5 cannot be joined" in err


def test_console_script_and_mmdet3d_style_entry(demo_tree, tmp_path):
    """``python tools/create_data.py kradar ...`` (mmdet3d's style) and ``python -m kradar_cli create-data``."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    for cmd in ([sys.executable, os.path.join(ROOT, 'tools', 'create_data.py'), 'kradar'],
                [sys.executable, '-m', 'kradar_cli', 'create-data']):
        out = str(tmp_path / cmd[-1])
        proc = subprocess.run(cmd + ['--root-path', demo_tree['root'], '--out-dir', out, '--split-dir',
                                     demo_tree['imagesets'], '--label-version', 'v2.1', '--labels-dir',
                                     demo_tree['labels_dir'], '--only-r'], env=env, cwd=str(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert sorted(os.listdir(out)) == ['kradar_infos_train.pkl', 'kradar_infos_val.pkl']
        with open(os.path.join(out, 'kradar_infos_val.pkl'), 'rb') as f:
            infos = pickle.load(f)
        assert all(set(i['annos']['avail']) <= set(['R']) for i in infos)   # --only-r
        assert infos[0]['label_version'] == 'v2.1'
