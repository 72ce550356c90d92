"""The demo (K-Radar-format data, tiny radar model, KRadarDataset) launched eval-only for real with 2 gloo
processes: the online evaluation of the first N frames equals the offline ``kradar-eval`` of the saved
predictions against the first N infos (GT consistent with the subset). (1 vs 2 processes: the EchoFusion-shaped
project, tests/project/test_launches.py.)
"""
import os.path as osp
import pickle
import re
import subprocess
import sys

import pytest

from tests import launching
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
                   cwd=ROOT, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    return str(out) + '/'


def demo(work_dir, nproc, demo_root, *flags):
    roots = ['data.{}.data_root={}'.format(split, demo_root) for split in ('train', 'val', 'test')]
    return dist_train(work_dir, nproc, '--eval-only', *flags, '--cfg-options', *roots, config=DEMO_CONFIG)


def kradar_eval(infos, results):
    return run([sys.executable, '-m', 'kradar_plugin.evaluation.cli', '--infos', infos, '--results', results,
                '--dt-z-is-bottom', '--box-convention', 'mmdet3d<1.0', '--protocol', 'legacy'],
               osp.dirname(results))


@launching.on_torchrun_stacks('test_echofusion_launcher.py::test_runner_constructor_and_eval_samples')
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
