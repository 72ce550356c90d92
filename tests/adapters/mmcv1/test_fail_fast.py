"""Failures during evaluation end the whole job quickly, non-zero, with the failing rank's traceback
tagged with its rank; collected predictions survive an evaluate failure; bad samplers are refused."""
import os.path as osp
import re

from tests import launching
from tests.launching import assert_ended_by_failfast

from .launch_utils import CONFIGS, TOY_COLLECTIVE_TIMEOUT_S, dist_train

import pytest  # noqa: E402

pytestmark = [pytest.mark.launch]


def root_cause(output):
    """The launcher's root-cause block (torchrun's ChildFailedError summary)."""
    assert 'Root Cause (first observed failure):' in output, output[-4000:]
    return output.split('Root Cause (first observed failure):', 1)[1]


def rank_lines(output, rank, world=2):
    tag = '[rank {}/{}]'.format(rank, world)
    return [line for line in output.splitlines() if tag in line]


@launching.on_torchrun_stacks('test_echofusion_launcher.py::'
                              'test_planted_evaluate_failure_ends_the_job_with_its_traceback')
def test_evaluate_failure_on_rank0_while_rank1_trains_on(tmp_path):
    # two epochs: after the first evaluation rank 1 goes on training and would wait in DDP's allreduce
    job = dist_train(tmp_path / 'evalfail', 2, '--cfg-options', 'data.val.fail_in=evaluate',
                     'runner.max_epochs=2')
    assert job.returncode != 0, job.describe()
    assert_ended_by_failfast(job, TOY_COLLECTIVE_TIMEOUT_S)
    lines = '\n'.join(rank_lines(job.output, 0))
    assert 'failed during evaluation' in lines, job.describe()
    assert 'RuntimeError: planted evaluate failure' in lines
    assert 'Traceback (most recent call last)' in lines
    saved = osp.join(str(tmp_path / 'evalfail'), 'eval_results', 'results_epoch_1.pkl')
    assert saved in lines
    assert re.search(r'kradar-eval --infos toy_infos\.pkl --results ' + re.escape(saved) + ' --classes thing', lines)
    assert osp.isfile(saved)
    cause = root_cause(job.output)
    assert 'rank      : 0 (local_rank: 0)' in cause
    assert 'planted evaluate failure' in cause and saved in cause  # error file carries the note too


@launching.on_torchrun_stacks('test_inference_records.py::test_bad_sample_named_then_relaunch_infers_only_the_rest')
def test_inference_failure_on_rank1(tmp_path):
    job = dist_train(tmp_path / 'inferfail', 2, '--eval-only', '--cfg-options', 'model.fail_on_rank=1',
                     env={'RANK_PREFIX': '1'})
    assert job.returncode != 0, job.describe()
    assert_ended_by_failfast(job, TOY_COLLECTIVE_TIMEOUT_S)
    lines = '\n'.join(rank_lines(job.output, 1))
    assert 'RuntimeError: planted inference failure on rank 1' in lines, job.describe()
    # RANK_PREFIX=1: torchrun --tee prefixes each line with the local process as well
    assert '[default1]:[rank 1/2] RuntimeError: planted inference failure on rank 1' in job.output
    assert 'Traceback (most recent call last)' in lines
    # the launcher blames rank 1, with its traceback, not rank 0 that only lost its peer
    cause = root_cause(job.output)
    assert 'rank      : 1 (local_rank: 1)' in cause, job.describe()
    assert 'RuntimeError: planted inference failure on rank 1' in cause


def test_sampler_giving_every_rank_the_whole_dataset_is_refused(tmp_path):
    job = dist_train(tmp_path / 'whole', 2, '--eval-only',
                     config=osp.join(CONFIGS, 'toy_whole_sampler.py'))
    assert job.returncode != 0, job.describe()
    assert_ended_by_failfast(job, TOY_COLLECTIVE_TIMEOUT_S)
    assert 'hands every rank the whole dataset (9 samples on each of 2 ranks)' in job.output
