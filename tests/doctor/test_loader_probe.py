"""``kradar-doctor --config`` on real configs: the datasets and loaders are built in a real 2-process gloo
group through mmdet3d's train flow (a project builder included), and each pitfall config FAILs exactly the
check it plants while the healthy config passes every one."""
import functools
import os
import subprocess
import sys

import pytest

from kradar_plugin.doctor import checks
from kradar_plugin.doctor.probes.loader_probe import run_loader_probe
from kradar_plugin.doctor.probes.script_facts import script_facts

from .helpers import MACHINE_INDEPENDENT

pytest.importorskip('torch')  # the light environment (numpy 2, no torch) runs tests/doctor too
pytest.importorskip('mmcv.runner', reason='the loader probe builds 1.x configs through mmcv.runner (OpenMMLab 1.x '
                                          'stacks; mmcv 2.x has none)')
pytest.importorskip('mmdet.datasets')

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(ROOT, 'tests', 'adapters', 'mmcv1', 'configs')
PITFALL_CHECKS = ('sampler', 'worker-pickle', 'worker-cuda', 'import-cuda', 'unused-params', 'shm-batch')


@functools.lru_cache(maxsize=None)
def probe(config, probe_model):
    """One real loader probe per config (2 processes each: shared by the tests below)."""
    return run_loader_probe(os.path.join(CONFIGS, config), probe_model=probe_model, cwd=ROOT)


def judged(config, probe_model=True, drop=(), **facts):
    """The doctor's results for ``config``: quick facts of this machine + the real loader probe."""
    found = dict(probe(config, probe_model))
    assert 'loader-probe-error' not in found, found
    found['pitfalls'] = [r for r in found['pitfalls'] if r.name not in drop]
    probes = dict(MACHINE_INDEPENDENT, **found)
    probes.update(facts)
    f = checks.collect_facts(config=os.path.join(CONFIGS, config), quick=True, probes_=probes)
    f.pop('loader-probe-skipped', None)
    return [r for r in checks.evaluate(f) if r.name in PITFALL_CHECKS]


def statuses(results):
    return sorted(set((r.name, r.status) for r in results))


def test_healthy_config_passes_every_check():
    results = judged('toy_pipeline.py')
    assert [r for r in results if r.status != 'OK'] == [], results
    names = [r.name for r in results]
    assert names.count('sampler') == 2 and names.count('worker-pickle') == 2 and names.count('worker-cuda') == 2
    reasons = '\n'.join(r.reason for r in results)
    assert 'train: DistributedGroupSampler (num_replicas=2) splits 8 samples over 2 ranks' in reasons
    assert 'a worker (start method fork) loaded and collated a sample without touching CUDA' in reasons
    assert 'every parameter got a gradient' in reasons


def test_rank_unaware_project_sampler_and_unused_head():
    results = judged('toy_pitfalls_train.py')
    bad = [(r.name, r.reason) for r in results if r.status == 'FAIL']
    assert [n for n, _ in bad] == ['sampler', 'unused-params'], results
    assert 'train: ToyRankUnawareSampler (not a DistributedSampler) is not rank-aware' in bad[0][1]
    assert 'aux_head (2)' in bad[1][1]
    # without --probe-model the model is not built and the check says how to opt in
    unprobed = judged('toy_pitfalls_train.py', drop=('unused-params',))
    skipped = [r for r in unprobed if r.name == 'unused-params']
    assert [r.status for r in skipped] == ['SKIP'] and '--probe-model' in skipped[0].reason


def test_cuda_in_workers_and_at_import():
    results = judged('toy_pitfalls_workers.py', probe_model=False)
    bad = [r for r in results if r.status == 'FAIL']
    assert sorted(r.name for r in bad) == ['import-cuda', 'worker-cuda', 'worker-cuda'], results
    assert all('fixture_cuda_import.py' in r.reason for r in bad if r.name == 'import-cuda')
    # the fork workers' own attempt: the transform's .cuda() call, not the parent's import
    assert all('fixture_pitfalls.py' in r.reason for r in bad if r.name == 'worker-cuda')


def test_lambda_with_spawn_workers():
    results = judged('toy_pitfalls_spawn.py', probe_model=False)
    bad = [r for r in results if r.status == 'FAIL']
    assert [r.name for r in bad] == ['worker-pickle', 'worker-pickle'], results
    assert all('dataset.pipeline.transforms[0].fn' in r.reason and 'start method spawn' in r.reason for r in bad)


def test_shm_against_the_measured_batches():
    # the loaders' measured batches against an assumed 64-byte /dev/shm: 2 loaders x 1 worker x 2 prefetch
    results = judged('toy_pipeline.py', **{'shm': 64, 'assumed': ('shm',)})
    r = [x for x in results if x.name == 'shm-batch'][0]
    assert r.status == 'FAIL' and 'train 1 workers x 2 prefetch x' in r.reason


def test_a_config_that_does_not_build_is_reported(tmp_path):
    cfg = tmp_path / 'broken.py'
    cfg.write_text("_base_ = [%r]\ndata = dict(train=dict(type='NoSuchDataset'))\n"
                   % os.path.join(CONFIGS, 'toy.py'))
    found = run_loader_probe(str(cfg), cwd=ROOT)
    assert 'NoSuchDataset' in found['loader-probe-error'], found
    f = checks.collect_facts(config=str(cfg), quick=True, probes_=dict(MACHINE_INDEPENDENT, **found))
    f.pop('loader-probe-skipped')
    results = dict((r.name, r) for r in checks.evaluate(f))
    assert results['sampler'].status == 'WARN' and 'NoSuchDataset' in results['sampler'].reason
    assert results['worker-pickle'].status == 'SKIP'


def test_command_line_exits_1_on_the_failures():
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor', '--config',
                           os.path.join(CONFIGS, 'toy_pitfalls_train.py'), '--probe-model', '--only', 'FAIL'],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=ROOT,
                          timeout=600, env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert [l.split()[1] for l in lines if l.startswith('FAIL ')] == ['sampler', 'unused-params']
    assert sum('fix: ' in l for l in lines) == 2


def test_start_method_of_a_train_script(tmp_path):
    """mmdet's tools/train.py sets it (setup_multi_processes) before init_dist; a script that does not gets
    'spawn' from mmcv's init_dist, and the doctor then builds spawn workers."""
    sets = tmp_path / 'sets.py'
    sets.write_text('from mmdet.utils import setup_multi_processes\nsetup_multi_processes(cfg)\n')
    leaves = tmp_path / 'leaves.py'
    leaves.write_text('from mmcv.runner import init_dist\ninit_dist("pytorch")\n')
    assert script_facts(str(sets))['sets-start-method'] is True
    assert script_facts(str(leaves))['sets-start-method'] is False

