"""The runner adapters on mmengine's real Runner, loops, hooks and DDP with a toy model (seconds per job),
launched by mmdet3d 1.4's unmodified tools/train.py with 1 and 2 gloo processes: eval-first semantics (save_best,
the scheduler), our train entry, the collection checks and fail-fast. Eval-only with 1 vs 2 processes, the
environment switch and eval-samples run on the real detector (test_eval_only_launch.py)."""
import os.path as osp

import pytest

from .helpers import ROOT, TOY_CONFIG, launch

pytestmark = [pytest.mark.launch, pytest.mark.mm2]

RUNNER = ['--cfg-options', 'runner_type=EvalOnlyRunner']


@pytest.fixture(scope='module')
def base(tmp_path_factory):
    return tmp_path_factory.mktemp('toy')


@pytest.fixture(scope='module')
def only_jobs(base):
    """The eval-only job with 2 processes: the reference of the metrics and of a successful job's time."""
    return {2: launch(TOY_CONFIG, base / 'only_2', nproc=2, args=RUNNER)}


def toy_metrics(job):
    return [job.metrics(r, 'toy/') for r in job.val_records('toy/')]


def assert_eval_only(job):
    assert job.returncode == 0, job.describe()
    assert [r['step'] for r in job.val_records('toy/')] == [0]
    assert job.train_records() == []
    assert job.checkpoints() == []
    assert 'kradar_plugin eval-only: done; stopping before the first training iteration' in job.output
    return toy_metrics(job)[0]


def test_eval_first_without_best_checkpoint_or_scheduler_step(base):
    job = launch(TOY_CONFIG, base / 'first', nproc=1, args=RUNNER + ['eval_mode=first'])
    assert job.returncode == 0, job.describe()
    assert [r['step'] for r in job.val_records('toy/')] == [0, 1, 2]
    means = [m['toy/mean'] for m in toy_metrics(job)]
    assert means[0] > means[1] > means[2], means  # training lowers it (rule 'greater' in the config)
    # the evaluation before training was not offered to save_best (else epoch 0 would stay the best) nor to
    # ReduceOnPlateauLR (else epoch 1's lower value would have cut the lr of epoch 2 to 1e-3)
    assert [c for c in job.checkpoints() if c.startswith('best_')] == ['best_toy_mean_epoch_1.pth']
    assert {r['epoch']: r['lr'] for r in job.train_records()} == {1: 0.01, 2: 0.01}


def test_our_train_entry_eval_first_with_samples(base):
    job = launch(TOY_CONFIG, base / 'ours', nproc=2, module='kradar_plugin.adapters.mmengine.train',
                 args=['--eval-first', '--eval-samples', '3', '--cfg-options', 'train_cfg.max_epochs=1'])
    assert job.returncode == 0, job.describe()
    assert [m['toy/n'] for m in toy_metrics(job)] == [3, 3]
    assert len(job.train_records()) == 2  # 8 training samples, 2 ranks, batch 2


def rank_lines(job, rank, world=2):
    return '\n'.join(l for l in job.output.splitlines() if '[rank {}/{}]'.format(rank, world) in l)


def test_metric_failure_ends_the_job_with_its_traceback(base, only_jobs):
    # rank 0's metric raises while rank 1 waits for the metrics broadcast (without fail-fast: until the
    # distributed timeout, 30 minutes here)
    job = launch(TOY_CONFIG, base / 'metric_fails', nproc=2,
                 args=RUNNER + ['val_evaluator.fail=True', 'env_cfg.dist_cfg.timeout=1800'])
    assert job.returncode != 0, job.describe()
    assert job.elapsed < only_jobs[2].elapsed + 60, job.describe()  # the successful job plus <= a minute
    lines = rank_lines(job, 0)
    assert 'failed during evaluation' in lines, job.describe()
    assert 'RuntimeError: planted metric failure' in lines and 'Traceback (most recent call last)' in lines
    saved = str(base / 'metric_fails' / 'eval_results' / 'results_epoch_0.pkl')
    assert saved in lines and len(job.collected()) == 11  # the collected results survive the failure


def test_inference_failure_on_rank_1_is_blamed_on_rank_1(base, only_jobs):
    job = launch(TOY_CONFIG, base / 'infer_fails', nproc=2,
                 args=RUNNER + ['model.fail_on_rank=1', 'env_cfg.dist_cfg.timeout=1800'])
    assert job.returncode != 0, job.describe()
    assert job.elapsed < only_jobs[2].elapsed + 60, job.describe()
    lines = rank_lines(job, 1)
    assert 'RuntimeError: planted inference failure on rank 1' in lines, job.describe()
    cause = job.output.split('Root Cause (first observed failure):', 1)[-1]
    assert 'rank      : 1 (local_rank: 1)' in cause, job.describe()
    assert 'planted inference failure on rank 1' in cause  # the error file carries the traceback


@pytest.mark.parametrize('sampler,message', [
    ('val_dataloader.sampler.type=WholeDatasetSampler', 'hands every rank the whole dataset (11 samples on each'),
    ('val_dataloader.sampler.shuffle=True', 'out of dataset order'),
])
def test_inexact_samplers_are_refused_before_evaluating(base, sampler, message):
    job = launch(TOY_CONFIG, base / sampler.split('=')[-1], nproc=2, args=RUNNER + [sampler])
    assert job.returncode != 0, job.describe()
    assert message in job.output, job.describe()
    assert job.val_records('toy/') == []


def test_tools_train_script_dispatches_to_the_engine_on_the_2_0_stack(base, only_jobs):
    """kradar_plugin's own tools/train.py (the 1.x script) hands over to the mmengine adapter when mmcv has no
    ``mmcv.runner``: the same --eval-only flag, one process, the same metrics as mmdet3d's script."""
    script = osp.join(ROOT, 'tools', 'train.py')
    job = launch(TOY_CONFIG, base / 'tools_train', nproc=1, script=script, args=['--eval-only'])
    metrics = assert_eval_only(job)
    assert toy_metrics(job) == toy_metrics(only_jobs[2])   # 1 process = 2 processes (11 samples: rank 1 padded)
    assert (metrics['toy/n'], metrics['toy/first'], metrics['toy/last']) == (11, 0, 10)
