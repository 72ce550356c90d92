"""The eval-only preflight in real 2-process launches: a project loader whose sampler ignores rank plus a
model with an unused head (our tools/train.py, runner.probe_model=True), and a lambda in the pipeline with
spawn workers (mmdet's unmodified tools/train.py with KRADAR_EVAL_ONLY=1, mp_start_method='spawn'): every
rank stops with the same FAIL lines before the first evaluation; and the healthy pipeline with one fork
worker per rank passes and evaluates."""
import os.path as osp

import mmdet
import pytest

from .launch_utils import CONFIGS, dist_train, torchrun_script

pytestmark = [pytest.mark.launch]

MMDET_TRAIN = osp.join(osp.dirname(mmdet.__file__), '.mim', 'tools', 'train.py')  # mmdet's own, unmodified

_PROBE = """
import multiprocessing as mp, sys
from mmcv import Config
import mmdet.apis, mmdet.datasets, mmdet.models, mmdet.utils     # what mmdet's tools/train.py imports
cfg = Config.fromfile(sys.argv[1])                                # its custom_imports (kradar_plugin)
if hasattr(mmdet.utils, 'setup_multi_processes'):
    mmdet.utils.setup_multi_processes(cfg)
print(mp.get_start_method(allow_none=True) or 'spawn')           # mmcv's init_dist picks spawn if unset
"""


def mmdet_start_method(config):
    """The DataLoader workers' start method under mmdet's own tools/train.py, found by replaying what that
    script does before init_dist: mmdet >= 2.20 applies the config's mp_start_method (default fork); mmdet
    2.19 (EchoFusion's) applies none, so an import that fixed the method first (numba 0.48 asks for it when
    mmdet3d 0.17.3 loads it) wins, else mmcv's init_dist sets spawn."""
    import subprocess
    import sys
    from .launch_utils import job_env
    proc = subprocess.run([sys.executable, '-c', _PROBE, config], env=job_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def fail_lines(output):
    return [l.strip() for l in output.splitlines() if l.strip().startswith('FAIL ')]


def test_rank_unaware_sampler_and_unused_head_stop_every_rank(tmp_path):
    job = dist_train(tmp_path / 'train', 2, '--eval-only', '--cfg-options', 'runner.probe_model=True',
                     config=osp.join(CONFIGS, 'toy_pitfalls_train.py'))
    assert job.returncode != 0, job.describe()
    for rank in (0, 1):
        assert '[rank %d/2] kradar_plugin preflight: 2 check(s) FAILED before the first evaluation' % rank \
            in job.output, job.describe()
    fails = fail_lines(job.output)
    assert any(l.startswith('FAIL  sampler') and 'ToyRankUnawareSampler (not a DistributedSampler) is not '
               'rank-aware' in l for l in fails), fails
    assert any(l.startswith('FAIL  unused-params') and 'aux_head (2)' in l for l in fails), fails
    assert 'fix: find_unused_parameters = True' in job.output
    assert job.val_records() == [] and 'Epoch(val)' not in job.output


def test_lambda_with_spawn_workers_stops_every_rank(tmp_path):
    config = osp.join(CONFIGS, 'toy_pitfalls_spawn.py')
    method = mmdet_start_method(config)
    if method != 'spawn':
        pytest.skip("the config's mp_start_method='spawn' is not what mmdet's train.py gives the workers here "
                    "({}: mmdet < 2.20 applies no mp_start_method); no spawn, no pickling".format(method))
    job = torchrun_script(MMDET_TRAIN, tmp_path / 'spawn', 2, config=osp.join(CONFIGS, 'toy_pitfalls_spawn.py'),
                          env={'KRADAR_EVAL_ONLY': '1'})
    assert job.returncode != 0, job.describe()
    for rank in (0, 1):
        assert '[rank %d/2] kradar_plugin preflight: 2 check(s) FAILED' % rank in job.output, job.describe()
    fails = [l for l in fail_lines(job.output) if l.startswith('FAIL  worker-pickle')]
    assert fails and all('start method spawn' in l and 'dataset.pipeline.transforms[0].fn' in l for l in fails)
    assert job.val_records() == []


def test_healthy_workers_pass_and_the_evaluation_runs(tmp_path):
    """mmdet's train.py: workers started with :func:`mmdet_start_method`."""
    method = mmdet_start_method(osp.join(CONFIGS, 'toy_pipeline.py'))
    job = torchrun_script(MMDET_TRAIN, tmp_path / 'ok', 2, config=osp.join(CONFIGS, 'toy_pipeline.py'),
                          env={'KRADAR_EVAL_ONLY': '1'})
    assert job.returncode == 0, job.describe()
    assert 'kradar_plugin preflight (2 rank(s))' in job.output and 'kradar_plugin preflight: OK' in job.output
    for name in ('train', 'val'):
        assert '%s: a worker (start method %s) loaded and collated a sample without touching CUDA' % (name, method) \
            in job.output, job.describe()
    assert 'val: 1 worker(s), start method %s: dataset, collate_fn and worker_init_fn pickle' % method in job.output
    (val,) = job.val_records()
    assert val['toy/num_samples'] == 9


def test_cuda_in_fork_workers_stops_every_rank(tmp_path):
    """A transform that moves data to CUDA in the workers (started as :func:`mmdet_start_method`). Without a
    GPU the worker's attempt fails and is what the preflight reports."""
    method = mmdet_start_method(osp.join(CONFIGS, 'toy_pitfalls_workers.py'))
    job = torchrun_script(MMDET_TRAIN, tmp_path / 'cuda', 2, config=osp.join(CONFIGS, 'toy_pitfalls_workers.py'),
                          env={'KRADAR_EVAL_ONLY': '1'})
    assert job.returncode != 0, job.describe()
    for rank in (0, 1):
        assert '[rank %d/2] kradar_plugin preflight: 2 check(s) FAILED' % rank in job.output, job.describe()
    fails = [l for l in fail_lines(job.output) if l.startswith('FAIL  worker-cuda')]
    assert fails and all('start method %s' % method in l and 'fixture_pitfalls.py' in l and '.cuda()' in l
                         for l in fails), fails
    assert job.val_records() == []

