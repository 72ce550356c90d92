"""Every documented way into eval-only / eval-first / eval-samples, launched from the EchoFusion-shaped
project's own directory with real torchrun (gloo, CPU), real mmdet3d 1.0.0rc6 (`train_model`, `KittiDataset`,
`MVXFasterRCNN`), real mmcv hooks: our tools/dist_train.sh, mmdet3d's own unmodified tools/train.py (the copy
shipped in the mmdet3d package), the environment switch, and the registry patch of the project's dataset."""
import glob
import os.path as osp
import pickle

import mmdet3d
import numpy as np
import pytest
import torch

from tests import launching
from tests.launching import assert_ended_by_failfast
from tests.adapters.mmcv1.launch_utils import Job

from .conftest import CONFIG, ROOT, VAL_FRAMES

pytestmark = [pytest.mark.launch]

MMDET3D_TRAIN = osp.join(osp.dirname(mmdet3d.__file__), '.mim', 'tools', 'train.py')
PREFIX = 'pts_bbox/kradar/Sedan_'
PROJECT_COLLECTIVE_TIMEOUT_S = 120  # the project config's dist_params.timeout
# One 2-process launch per route and stack (plus the one 1-vs-2 comparison below). On EchoFusion's stack
# (torch < 2) its users launch mmdet3d 0.17.3's train.py through torch.distributed.launch: there the switches,
# eval-first and fail-fast are launched that way (test_echofusion_launcher.py), not again through torchrun.
on_torchrun_stacks = pytest.mark.skipif(
    int(torch.__version__.split('.')[0]) < 2,
    reason="EchoFusion's stack: this route is launched as EchoFusion users launch it (test_echofusion_launcher.py)")


def launch(cmd, project_dir, work_dir, env=None):
    return launching.run(cmd, work_dir, cwd=project_dir, env=env, job_class=Job)


def ours(project_dir, work_dir, nproc, *flags, config=CONFIG, env=None):
    """Our tools/dist_train.sh, run from the project directory (as EchoFusion's README runs its own)."""
    cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), config, str(nproc), '--work-dir', str(work_dir)]
    return launch(cmd + list(flags), project_dir, work_dir, env)


def mmdet3d_script(project_dir, work_dir, nproc, *flags, config=CONFIG, env=None):
    """mmdet3d's unmodified tools/train.py under torchrun, with the project root on PYTHONPATH as mmdet3d's
    dist_train.sh puts its repository root there."""
    cmd = launching.torchrun_cmd(nproc, MMDET3D_TRAIN, config, '--launcher', 'pytorch', '--work-dir', work_dir,
                                 *flags)
    extra = dict(env or {})
    extra['PYTHONPATH'] = str(project_dir) + ':' + ROOT
    return launch(cmd, project_dir, work_dir, extra)


def kradar_metrics(record):
    return {k: v for k, v in record.items() if k.startswith(PREFIX)}


def saved_predictions(job):
    paths = sorted(glob.glob(osp.join(job.work_dir, 'eval_results', '*.pkl')))
    assert paths, job.describe()
    with open(paths[0], 'rb') as f:
        return pickle.load(f)


def assert_eval_only(job, frames=VAL_FRAMES):
    """Zero training iterations, no checkpoint, one evaluation at epoch 0 with the K-Radar metrics in the
    text log, the JSON log and work_dir/*.log, and the predictions of every frame on disk."""
    assert job.returncode == 0, job.describe()
    val = job.val_records()
    assert len(val) == 1 and val[0]['epoch'] == 0, job.describe()
    assert job.train_records() == [] and 'Epoch [1][' not in job.output
    assert job.checkpoints() == [], job.describe()
    metrics = kradar_metrics(val[0])
    # (2D, BEV, 3D) x 3 difficulties x EchoFusion's labels '_strict' (IoU 0.3) and '_loose' (0.5, then 0.7
    # overwrites it)
    assert len(metrics) == 18, sorted(val[0])
    logs = glob.glob(osp.join(job.work_dir, '*.log'))
    assert len(logs) == 1, logs
    with open(logs[0]) as f:
        text = f.read()
    assert 'Epoch(val) [0]' in text and 'Sedan AP@0.30, 0.30, 0.30' in text, text[-3000:]
    preds = saved_predictions(job)  # plain numpy: loads without torch or mmdet3d
    assert len(preds) == frames
    assert all(set(p) == {'pts_bbox'} and isinstance(p['pts_bbox']['boxes_3d'], np.ndarray) for p in preds)
    return metrics


# score_thr=0: the initial weights' low-score boxes are kept, so there are predictions to compare
KEEP_LOW_SCORES = ('--cfg-options', 'model.test_cfg.pts.score_thr=0.0')


def test_ours_eval_only_one_and_two_processes_identical(project_dir, ours_eval_only_two, tmp_path):
    one = ours(project_dir, tmp_path / 'one', 1, '--eval-only', *KEEP_LOW_SCORES)
    two = ours_eval_only_two
    assert assert_eval_only(one) == assert_eval_only(two)
    assert sum(len(p['pts_bbox']['scores_3d']) for p in saved_predictions(one)) > VAL_FRAMES
    # the same predictions, frame by frame (torchrun runs 2 processes with OMP_NUM_THREADS=1, 1 process with
    # the default threads: float reductions may differ in the last bits)
    for a, b in zip(saved_predictions(one), saved_predictions(two)):
        assert np.array_equal(a['pts_bbox']['labels_3d'], b['pts_bbox']['labels_3d'])
        for key in ('boxes_3d', 'scores_3d'):
            assert np.allclose(a['pts_bbox'][key], b['pts_bbox'][key], rtol=1e-5, atol=1e-5)


@on_torchrun_stacks
@pytest.mark.parametrize('nproc', [2])  # 1 process: test_ours_eval_only_one_and_two_processes_identical
def test_mmdet3d_train_script_cfg_options(project_dir, tmp_path, nproc):
    assert osp.isfile(MMDET3D_TRAIN)
    job = mmdet3d_script(project_dir, tmp_path / 'cfg', nproc,
                         '--cfg-options', 'runner.constructor=EvalOnlyRunnerConstructor')
    assert_eval_only(job)


@on_torchrun_stacks
@pytest.mark.parametrize('nproc', [2])
def test_mmdet3d_train_script_environment_switch(project_dir, tmp_path, nproc):
    job = mmdet3d_script(project_dir, tmp_path / 'env', nproc, env={'KRADAR_EVAL_ONLY': '1',
                                                                     'KRADAR_EVAL_SAMPLES': '10'})
    assert_eval_only(job, frames=10)


@on_torchrun_stacks
@pytest.mark.parametrize('nproc', [2])
def test_eval_first_with_eval_samples_then_trains(project_dir, tmp_path, nproc):
    job = ours(project_dir, tmp_path / 'first', nproc, '--eval-first', '--eval-samples', '8',
               '--cfg-options', 'runner.max_epochs=1', 'total_epochs=1', 'log_config.interval=1')
    assert job.returncode == 0, job.describe()
    val = job.val_records()
    assert [r['epoch'] for r in val] == [0, 1], job.describe()
    assert len(job.train_records()) > 0
    assert 'epoch_1.pth' in job.checkpoints(), job.checkpoints()
    assert len(saved_predictions(job)) == 8  # eval_results/results_epoch_0.pkl: the first 8 samples


def derived_config(project_dir, name, text):
    """A config next to the project's, based on it (how users layer their experiments)."""
    path = osp.join(str(project_dir), 'projects', 'configs', 'kradar', name)
    with open(path, 'w') as f:
        f.write("_base_ = ['./pointpillars_kradar_radar.py']\n" + text)
    return osp.relpath(path, str(project_dir))


def test_patched_project_dataset_through_eval_hook(project_dir, tmp_path):
    """EchoFusion's class gets our evaluate through the registry patch; mmcv's EvalHook calls it with every
    keyword the config's evaluation dict holds (EchoFusion's pipeline=test_pipeline, and protocol)."""
    config = derived_config(project_dir, 'patched.py', (
        "custom_imports = dict(imports=['projects.mmdet3d_plugin', 'kradar_plugin', "
        "'kradar_plugin.adapters.mmcv1.patch_echofusion'], allow_failed_imports=False)\n"))
    job = ours(project_dir, tmp_path / 'patched', 2, '--eval-only', '--cfg-options', 'evaluation.protocol=fixed',
               config=config)
    assert job.returncode == 0, job.describe()
    val = job.val_records()
    assert len(val) == 1
    assert any(k.startswith('pts_bbox/') for k in val[0]) and not kradar_metrics(val[0]), sorted(val[0])
    assert 'K-Radar evaluation of pts_bbox (fixed protocol)' in job.output
    # the raw results land in the work dir: the dataset finds it through the 'mmdet' logger's file handler
    assert 'raw results of {} frames saved to {}'.format(VAL_FRAMES, job.work_dir) in job.output


PLANTED = """
from mmdet.datasets import DATASETS
from projects.mmdet3d_plugin.datasets import KRadarDataset


@DATASETS.register_module()
class PlantedFailureDataset(KRadarDataset):
    def evaluate(self, results, *args, **kwargs):
        raise RuntimeError('planted failure in the project evaluate, {} results'.format(len(results)))
"""


@on_torchrun_stacks
def test_planted_exception_in_project_evaluate_fails_fast(project_dir, tmp_path):
    with open(osp.join(str(project_dir), 'projects', 'mmdet3d_plugin', 'planted.py'), 'w') as f:
        f.write(PLANTED)
    config = derived_config(project_dir, 'planted.py', (
        "custom_imports = dict(imports=['projects.mmdet3d_plugin', 'projects.mmdet3d_plugin.planted', "
        "'kradar_plugin'], allow_failed_imports=False)\n"
        "data = dict(val=dict(type='PlantedFailureDataset'))\n"))
    job = ours(project_dir, tmp_path / 'planted', 2, '--eval-only', config=config)
    assert_ended_by_failfast(job, PROJECT_COLLECTIVE_TIMEOUT_S)
    assert 'RuntimeError: planted failure in the project evaluate, {} results'.format(VAL_FRAMES) in job.output
    assert 'Traceback' in job.output and 'planted.py' in job.output
    assert len(saved_predictions(job)) == VAL_FRAMES  # nothing computed is lost
