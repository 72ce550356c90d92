"""Eval-only / eval-first / eval-samples through real launches: torchrun, gloo on CPU, the real mmcv-full
runner and mmdet hooks, our tools/train.py and mmdet's own unmodified tools/train.py."""
import os.path as osp
import pickle

import mmdet
import pytest

from .launch_utils import CONFIGS, dist_train, metrics, run, torchrun_script

pytestmark = [pytest.mark.launch]

MMDET_TRAIN = osp.join(osp.dirname(mmdet.__file__), '.mim', 'tools', 'train.py')


def load_results(job, tag):
    with open(osp.join(job.work_dir, 'eval_results', 'results_{}.pkl'.format(tag)), 'rb') as f:
        return pickle.load(f)


def assert_eval_only(job, num_samples):
    assert job.returncode == 0, job.describe()
    val = job.val_records()
    assert len(val) == 1, job.describe()
    assert val[0]['epoch'] == 0
    assert val[0]['toy/num_samples'] == num_samples
    assert job.train_records() == []
    assert 'Epoch [1][' not in job.output  # no training iteration was logged
    assert job.checkpoints() == []
    assert 'Epoch(val) [0]' in job.output  # metrics went through TextLoggerHook
    results = load_results(job, 'epoch_0')
    assert [r['sample_idx'] for r in results] == list(range(num_samples))
    return metrics(val[0])


def test_eval_only_one_and_two_processes_identical(tmp_path):
    one = dist_train(tmp_path / 'one', 1, '--eval-only')
    two = dist_train(tmp_path / 'two', 2, '--eval-only')
    m1 = assert_eval_only(one, 9)
    m2 = assert_eval_only(two, 9)
    assert m1 == m2
    # the logged metric is the one of the pickled predictions (targets: 0.5 * sum(x) + 0.1 * index)
    from .fixture_components import toy_features
    preds = load_results(two, 'epoch_0')
    mae = sum(abs(r['pred'] - toy_features(r['sample_idx'])[1]) for r in preds) / len(preds)
    assert m2['toy/mae'] == pytest.approx(mae, abs=1e-5)
    # no training and no wait: two processes take about as long as one (startup and one evaluation)
    assert two.elapsed < 2 * one.elapsed + 30, (one.elapsed, two.describe())


def test_eval_first_then_trains_with_eval_samples(tmp_path):
    job = dist_train(tmp_path / 'first', 2, '--eval-first', '--eval-samples', '4')
    assert job.returncode == 0, job.describe()
    val = job.val_records()
    assert [r['epoch'] for r in val] == [0, 1], job.describe()
    assert [r['toy/num_samples'] for r in val] == [4, 4]
    assert [r['toy/last_sample'] for r in val] == [3, 3]
    assert len(job.train_records()) > 0
    assert 'epoch_1.pth' in job.checkpoints()
    assert len(load_results(job, 'epoch_0')) == 4
    assert len(load_results(job, 'epoch_1')) == 4
    assert val[0]['toy/mae'] != val[1]['toy/mae']  # one epoch of training changed the weights


def test_eval_samples_evaluates_exactly_n(tmp_path):
    job = dist_train(tmp_path / 'samples', 2, '--eval-only', '--eval-samples', '3')
    assert_eval_only(job, 3)
    assert job.val_records()[0]['toy/last_sample'] == 2


def test_unmodified_mmdet_train_script_with_cfg_options(tmp_path):
    assert osp.isfile(MMDET_TRAIN)
    job = torchrun_script(MMDET_TRAIN, tmp_path / 'mmdet', 2,
                          '--cfg-options', 'runner.constructor=EvalOnlyRunnerConstructor')
    assert_eval_only(job, 9)


def test_environment_switch_with_unmodified_mmdet_train_script(tmp_path):
    job = torchrun_script(MMDET_TRAIN, tmp_path / 'env', 2,
                          env={'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_SAMPLES': '5'})
    assert_eval_only(job, 5)


def test_config_switch_non_distributed(tmp_path):
    """The constructor named in the config; single process without a launcher (EvalHook path)."""
    import sys
    work_dir = tmp_path / 'cfg'
    job = run([sys.executable, MMDET_TRAIN, osp.join(CONFIGS, 'toy_eval_only.py'), '--work-dir',
               str(work_dir)], str(work_dir))
    assert_eval_only(job, 9)
