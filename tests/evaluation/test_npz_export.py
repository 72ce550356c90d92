"""``kradar-eval --export DIR`` and reading the exported ``.npz`` back: the pickle-free way to share inputs.

Annotations (``--gt-annos``/``--dt-annos``) and results (``--results``) exported by one run and read back
by another give the same metrics (the same JSON) as the pickles, with the same ``--conditions``; the .npz
holds arrays only (``np.load(allow_pickle=False)`` reads every member), and a wrong-kind .npz is one error
line naming the file.
"""
import json
import os
import pickle

import numpy as np
import pytest

from ._data import noisy_dets, random_gt
from .test_validation_cli import _run_cli

CONDITIONS = [{'road_type': 'urban', 'capture_time': ('day', 'night')[i % 2], 'climate': ('normal', 'rain')[i % 3 == 0],
               'sequence': str(i // 4)} for i in range(12)]


def _dump(path, obj):
    with open(str(path), 'wb') as f:
        pickle.dump(obj, f, protocol=4)
    return str(path)


def _metrics(proc, path):
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(path) as f:
        return json.load(f)


def _arrays_only(path):
    with np.load(path, allow_pickle=False) as npz:
        return dict((k, npz[k]) for k in npz.files)


@pytest.fixture(scope='module')
def sets(tmp_path_factory):
    root = tmp_path_factory.mktemp('npz')
    rs = np.random.RandomState(3)
    gts = [random_gt(rs, 1 + i % 3) for i in range(12)]
    dts = [noisy_dets(rs, g, 1) for g in gts]
    gts[4] = random_gt(rs, 0)                    # a frame without objects
    with open(str(root / 'conditions.json'), 'w') as f:
        json.dump(CONDITIONS, f)
    return root, gts, dts


def test_exported_annotations_give_the_same_metrics(sets):
    root, gts, dts = sets
    gt, dt = _dump(root / 'gt.pkl', gts), _dump(root / 'dt.pkl', dts)
    common = ['--protocol', 'all', '--conditions', str(root / 'conditions.json')]
    out = str(root / 'export_annos')
    first = _run_cli(['--gt-annos', gt, '--dt-annos', dt, '--export', out, '--json', str(root / 'a.json')] + common,
                     str(root))
    a = _metrics(first, str(root / 'a.json'))
    assert sorted(os.listdir(out)) == ['dt.npz', 'gt.npz']
    assert 'exported to' in first.stdout
    for name, kind in (('gt.npz', 'annos'), ('dt.npz', 'annos')):
        arrays = _arrays_only(os.path.join(out, name))
        assert str(arrays['kradar_npz']) == kind and len(arrays['offsets']) == len(gts) + 1
        assert all(v.dtype.kind != 'O' for v in arrays.values())
    assert 'score' in _arrays_only(os.path.join(out, 'dt.npz'))
    second = _run_cli(['--gt-annos', os.path.join(out, 'gt.npz'), '--dt-annos', os.path.join(out, 'dt.npz'),
                       '--json', str(root / 'b.json')] + common, str(root))
    assert _metrics(second, str(root / 'b.json')) == a
    mixed = _run_cli(['--gt-annos', gt, '--dt-annos', os.path.join(out, 'dt.npz'), '--json', str(root / 'c.json')]
                     + common, str(root))
    assert _metrics(mixed, str(root / 'c.json')) == a


def test_exported_results_give_the_same_metrics(sets):
    root, gts, dts = sets
    rs = np.random.RandomState(5)
    infos = [{'annos': {'name': g['name'], 'location': g['location'][:, [2, 0, 1]] * [1, -1, 1],
                        'dimensions': g['dimensions'], 'rotation_y': g['rotation_y']},
              'road_type': c['road_type'], 'capture_time': c['capture_time'], 'climate': c['climate']}
             for g, c in zip(gts, CONDITIONS)]
    results = [{'pts_bbox': {'boxes_3d': np.c_[rs.uniform(2, 60, (n, 1)), rs.uniform(-5, 5, (n, 2)),
                                               rs.uniform(1, 4, (n, 3)), rs.uniform(-3, 3, (n, 1))].astype(np.float32),
                             'scores_3d': rs.rand(n).astype(np.float32), 'labels_3d': np.zeros(n, dtype=np.int64)}}
               for n in [2, 0, 3, 1] * 3]
    info, res = _dump(root / 'infos.pkl', infos), _dump(root / 'results.pkl', results)
    out = str(root / 'export_results')
    common = ['--classes', 'Sedan', '--protocol', 'all']
    a = _metrics(_run_cli(['--infos', info, '--results', res, '--export', out, '--json', str(root / 'ra.json')]
                          + common, str(root)), str(root / 'ra.json'))
    assert os.listdir(out) == ['results.npz']
    arrays = _arrays_only(os.path.join(out, 'results.npz'))
    assert str(arrays['kradar_npz']) == 'results' and arrays['boxes_3d'].shape == (18, 7)
    assert arrays['offsets'].tolist() == list(np.cumsum([0] + [2, 0, 3, 1] * 3))
    b = _metrics(_run_cli(['--infos', info, '--results', os.path.join(out, 'results.npz'), '--json',
                           str(root / 'rb.json')] + common, str(root)), str(root / 'rb.json'))
    assert a == b
    # and with --compare-results from the .npz: B == A, so every delta is zero
    c = _metrics(_run_cli(['--infos', info, '--results', res, '--compare-results', os.path.join(out, 'results.npz'),
                           '--json', str(root / 'rc.json'), '--conditions', str(root / 'conditions.json')] + common,
                          str(root)), str(root / 'rc.json'))
    assert '"delta"' in json.dumps(c)


def test_a_wrong_kind_of_npz_is_one_line(sets, tmp_path):
    root, gts, dts = sets
    gt = _dump(tmp_path / 'gt.pkl', gts)
    np.savez(str(tmp_path / 'results.npz'), kradar_npz=np.array('results'), offsets=np.zeros(1, dtype=np.int64))
    np.savez(str(tmp_path / 'plain.npz'), a=np.zeros(3))
    for name in ('results.npz', 'plain.npz'):
        proc = _run_cli(['--gt-annos', gt, '--dt-annos', str(tmp_path / name)], str(tmp_path))
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        assert proc.returncode == 2 and len(lines) == 1 and 'Traceback' not in proc.stderr, proc.stderr
        assert '--dt-annos' in lines[0] and repr(str(tmp_path / name)) in lines[0], lines[0]
