"""The demo (K-Radar-format data, tiny radar model, KRadarDataset) launched eval-only for real:
1 and 2 gloo processes give identical metrics, and the online evaluation of the first N frames equals the
offline ``kradar-eval`` of the saved predictions against the first N infos (GT consistent with the subset).
"""
import os.path as osp
import pickle
import re
import subprocess
import sys

import pytest

from .launch_utils import ROOT, dist_train, run

DEMO_CONFIG = osp.join(ROOT, 'configs', 'kradar', 'demo_eval_only.py')
AP_LINE = re.compile(r'^(bbox|bev|3d|aos)\s+AP:.*$', re.M)

pytestmark = [pytest.mark.launch, pytest.mark.skipif(not osp.isfile(DEMO_CONFIG) or
                                not osp.isfile(osp.join(ROOT, 'tools', 'create_demo_data.py')),
                                reason='demo config / generator not present')]


@pytest.fixture(scope='module')
def demo_root(tmp_path_factory):
    out = tmp_path_factory.mktemp('demo') / 'data'
    subprocess.run([sys.executable, osp.join(ROOT, 'tools', 'create_demo_data.py'), '--out', str(out)],
                   cwd=ROOT, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return str(out) + '/'


def demo(work_dir, nproc, demo_root, *flags):
    roots = ['data.{}.data_root={}'.format(split, demo_root) for split in ('train', 'val', 'test')]
    return dist_train(work_dir, nproc, '--eval-only', *flags, '--cfg-options', *roots, config=DEMO_CONFIG)


def val_metrics(job):
    records = job.val_records()
    assert len(records) == 1, job.describe()
    return {k: v for k, v in records[0].items() if k not in ('mode', 'epoch', 'iter', 'lr')}


def kradar_eval(infos, results):
    return run([sys.executable, '-m', 'kradar_plugin.evaluation.cli', '--infos', infos, '--results', results,
                '--dt-z-is-bottom', '--box-convention', 'mmdet3d<1.0', '--protocol', 'legacy'],
               osp.dirname(results))


def test_demo_one_vs_two_processes_identical(tmp_path, demo_root):
    one = demo(tmp_path / 'one', 1, demo_root)
    two = demo(tmp_path / 'two', 2, demo_root)
    assert one.returncode == 0, one.describe()
    assert two.returncode == 0, two.describe()
    assert AP_LINE.search(two.output), two.describe()  # the AP table is printed
    m1, m2 = val_metrics(one), val_metrics(two)
    assert m1 and m1 == m2
    assert one.checkpoints() == [] and two.train_records() == []
    # the saved predictions re-evaluated offline give the same table
    offline = kradar_eval(osp.join(demo_root, 'kradar_infos_val.pkl'),
                          osp.join(two.work_dir, 'eval_results', 'results_epoch_0.pkl'))
    assert offline.returncode == 0, offline.describe()
    assert AP_LINE.findall(offline.output) and \
        [m.group(0) for m in AP_LINE.finditer(offline.output)] == \
        [m.group(0) for m in AP_LINE.finditer(two.output)]


def test_demo_eval_samples_keeps_ground_truth_consistent(tmp_path, demo_root):
    n = 10
    job = demo(tmp_path / 'sub', 2, demo_root, '--eval-samples', str(n))
    assert job.returncode == 0, job.describe()
    results_file = osp.join(job.work_dir, 'eval_results', 'results_epoch_0.pkl')
    with open(results_file, 'rb') as f:
        assert len(pickle.load(f)) == n
    with open(osp.join(demo_root, 'kradar_infos_val.pkl'), 'rb') as f:
        infos = pickle.load(f)
    first = osp.join(str(tmp_path), 'infos_first_{}.pkl'.format(n))
    with open(first, 'wb') as f:
        pickle.dump(infos[:n] if isinstance(infos, list) else dict(infos, infos=infos['infos'][:n]), f)
    offline = kradar_eval(first, results_file)
    assert offline.returncode == 0, offline.describe()
    online = [m.group(0) for m in AP_LINE.finditer(job.output)]
    assert online and online == [m.group(0) for m in AP_LINE.finditer(offline.output)]
