"""Eval-only / eval-first / eval-samples through the real mmengine Runner, launched by mmdet3d 1.4's own,
unmodified ``tools/train.py`` (and by ``python -m kradar_plugin.adapters.mmengine.train``) with 1 and 2 gloo processes
on CPU, a real mmdet3d detector (PointPillars ``VoxelNet``, mmcv 2.1 CPU ops) on K-Radar-format data, and
``KRadarMetric``. Selected by ``--cfg-options runner_type=EvalOnlyRunner ...`` or by KRADAR_EVAL_*.
Failure handling and sampler checks are tested on the fast toy model (test_toy_launch.py)."""
import glob
import os.path as osp
import re

import numpy as np
import pytest

from .helpers import demo_data, launch, write_config

pytestmark = [pytest.mark.launch, pytest.mark.mm2]

FRAMES = 16


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp('mm2_launch')
    root = demo_data(base / 'data', frames=FRAMES, train_frames=8)
    return base, root, write_config(base / 'cfg.py', root)


@pytest.fixture(scope='module')
def eval_only_jobs(setup):
    """The same eval-only run with 1 and with 2 processes (mmdet3d's tools/train.py, runner_type)."""
    base, _, cfg = setup
    return {n: launch(cfg, base / 'eval_only_{}'.format(n), nproc=n,
                      args=['--cfg-options', 'runner_type=EvalOnlyRunner']) for n in (1, 2)}


def evaluated_frames(job):
    return [int(n) for n in re.findall(r'K-Radar evaluation of pts_bbox \(legacy protocol, (\d+) frames\)',
                                        job.output)]


def assert_eval_only(job, frames=FRAMES):
    assert job.returncode == 0, job.describe()
    vals = job.val_records()
    assert len(vals) == 1 and vals[0]['step'] == 0, vals
    assert job.train_records() == [], job.train_records()
    assert job.checkpoints() == []
    assert 'kradar_plugin eval-only: done; stopping before the first training iteration' in job.output
    assert evaluated_frames(job) == [frames], job.describe()
    return job.metrics(vals[0])


def assert_same_predictions(a, b):
    assert [r['sample_idx'] for r in a] == [r['sample_idx'] for r in b]
    for ra, rb in zip(a, b):
        np.testing.assert_array_equal(ra['boxes_3d'], rb['boxes_3d'])
        np.testing.assert_array_equal(ra['scores_3d'], rb['scores_3d'])
        np.testing.assert_array_equal(ra['labels_3d'], rb['labels_3d'])


def test_eval_only_one_and_two_processes_identical(eval_only_jobs):
    one, two = eval_only_jobs[1], eval_only_jobs[2]
    m1, m2 = assert_eval_only(one), assert_eval_only(two)
    assert len(m1) > 10 and m1 == m2
    assert 'no CUDA: process group initialised with the gloo backend' in two.output
    c1, c2 = one.collected(), two.collected()
    assert [r['sample_idx'] for r in c1] == list(range(FRAMES))
    assert sum(len(r['boxes_3d']) for r in c1) > 0  # the random model's boxes: something to compare
    assert_same_predictions(c1, c2)
    for job in (one, two):  # KRadarMetric reuses the guard's pickle (no second copy) and writes its sidecars
        assert 'results_epoch_0.pkl (by the runner, before compute_metrics)' in job.output, job.describe()
        assert glob.glob(osp.join(job.work_dir, '**', 'kradar_results_*.pkl'), recursive=True) == []
        assert osp.isfile(osp.join(job.work_dir, 'eval_results', 'results_epoch_0_infos.pkl'))


def test_env_variable_with_an_unmodified_config_and_train_script(setup, eval_only_jobs):
    base, _, cfg = setup
    job = launch(cfg, base / 'env_only', nproc=2, env={'KRADAR_EVAL_ONLY': '1'})
    assert assert_eval_only(job) == eval_only_jobs[1].metrics(eval_only_jobs[1].val_records()[0])


def test_eval_first_then_training_with_samples_from_the_environment(setup):
    base, _, cfg = setup
    job = launch(cfg, base / 'env_first', nproc=1, env={'KRADAR_EVAL_FIRST': '1', 'KRADAR_EVAL_SAMPLES': '6'})
    assert job.returncode == 0, job.describe()
    assert [r['step'] for r in job.val_records()] == [0, 1]       # before training, after epoch 1
    assert evaluated_frames(job) == [6, 6]                          # every evaluation of the run
    assert len(job.train_records()) == 2                            # 8 training frames, batch 4
    ckpts = job.checkpoints()
    assert 'epoch_1.pth' in ckpts
    # save_best was off for the evaluation before training only
    assert [c for c in ckpts if c.startswith('best_')] == ['best_pts_bbox_Sedan_bev@0.5_epoch_1.pth'], ckpts
    assert [r['sample_idx'] for r in job.collected('epoch_0')] == list(range(6))


def test_eval_samples_from_cfg_options_with_two_processes(setup, eval_only_jobs):
    base, _, cfg = setup
    job = launch(cfg, base / 'samples', nproc=2,
                 args=['--cfg-options', 'runner_type=EvalOnlyRunner', 'eval_samples=5'])
    assert_eval_only(job, frames=5)
    collected = job.collected()
    assert [r['sample_idx'] for r in collected] == list(range(5))  # 5 on 2 ranks: the padding is dropped
    assert_same_predictions(collected, eval_only_jobs[1].collected()[:5])


def test_our_train_entry_eval_only_two_processes(setup, eval_only_jobs):
    base, _, cfg = setup
    job = launch(cfg, base / 'ours', nproc=2, module='kradar_plugin.adapters.mmengine.train', args=['--eval-only'])
    assert assert_eval_only(job) == eval_only_jobs[1].metrics(eval_only_jobs[1].val_records()[0])
