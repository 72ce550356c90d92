"""The Slurm launcher path (``tools/slurm_train.sh`` -> ``srun`` -> ``tools/train.py --launcher slurm`` ->
mmcv's ``init_dist('slurm', **dist_params)``) with an eval-only checkpoint sweep and fail-fast: two real
tasks with gloo on CPU, each started with the environment srun gives a task (SLURM_PROCID, SLURM_NTASKS,
SLURM_LOCALID, SLURM_NODEID, SLURM_NODELIST, SLURM_JOB_ID ...). The ``srun`` and ``scontrol`` on PATH are
small stand-ins this test writes into its temporary directory (the real binaries belong to a cluster):
srun starts the tasks (and ends them all when one exits non-zero, as ``--kill-on-bad-exit=1``), scontrol
expands the node list to its first host, 127.0.0.1."""
import json
import os
import os.path as osp
import stat
import sys

import pytest

from kradar_plugin.adapters.mmcv1.dist_init import slurm_environment
from tests.launching import free_port

from tests import launching
from tests.launching import assert_ended_by_failfast

from .launch_utils import ROOT, TOY, TOY_COLLECTIVE_TIMEOUT_S, run
from .sweep_checkpoints import ckpt_dir, mae_of

pytestmark = [pytest.mark.launch]

SRUN = '''#!{python}
"""Test stand-in for srun: start --ntasks copies of the command with a Slurm task's environment."""
import os, signal, subprocess, sys, time
args, i, opts = sys.argv[1:], 0, {{}}
while args[i].startswith('-'):
    if '=' in args[i]:
        key, value = args[i].split('=', 1); i += 1
    else:
        key, value = args[i], args[i + 1]; i += 2
    opts[key] = value
ntasks, per_node = int(opts['--ntasks']), int(opts['--ntasks-per-node'])
nodes = -(-ntasks // per_node)
procs = []
for rank in range(ntasks):
    env = dict(os.environ, SLURM_PROCID=str(rank), SLURM_NTASKS=str(ntasks), SLURM_LOCALID=str(rank % per_node),
               SLURM_NODEID=str(rank // per_node), SLURM_NNODES=str(nodes), SLURM_NODELIST='cn[01-%02d]' % nodes,
               SLURM_STEP_NODELIST='cn[01-%02d]' % nodes, SLURM_JOB_ID='4242', SLURM_JOB_NAME=opts['--job-name'],
               SLURM_TASKS_PER_NODE='%d(x%d)' % (per_node, nodes), SLURM_CPUS_PER_TASK=opts['--cpus-per-task'])
    procs.append(subprocess.Popen(args[i:], env=env))
codes = [None] * ntasks
while None in codes:
    for rank, p in enumerate(procs):
        if codes[rank] is None and p.poll() is not None:
            codes[rank] = p.returncode
            if p.returncode != 0:
                sys.stderr.write('srun: error: task %d: Exited with exit code %d\\n' % (rank, p.returncode))
                if opts.get('--kill-on-bad-exit') == '1':
                    for other in procs:
                        if other.poll() is None:
                            other.send_signal(signal.SIGKILL)
    time.sleep(0.1)
sys.exit(max(abs(c) for c in codes))
'''
SCONTROL = '''#!/bin/sh
# test stand-in for `scontrol show hostname LIST`: the job's first host is this machine
[ "$1 $2" = "show hostname" ] && echo 127.0.0.1
'''


@pytest.fixture
def slurm_bin(tmp_path):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    for name, text in (('srun', SRUN.format(python=sys.executable)), ('scontrol', SCONTROL)):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(bin_dir)


def slurm_train(slurm_bin, work_dir, *flags, tasks=2, per_node=2):
    env = {'PATH': slurm_bin + os.pathsep + os.environ['PATH'], 'GPUS': str(tasks), 'GPUS_PER_NODE': str(per_node),
           'CPUS_PER_TASK': '1', 'PORT': str(free_port())}
    cmd = ['bash', osp.join(ROOT, 'tools', 'slurm_train.sh'), 'cpu', 'kradar-test', TOY, str(work_dir),
           '--no-doctor'] + list(flags)
    return run(cmd, str(work_dir), env)


def test_task_environment_to_torch_distributed(slurm_bin, monkeypatch):
    monkeypatch.setenv('PATH', slurm_bin + os.pathsep + os.environ['PATH'])
    env = dict(SLURM_PROCID='3', SLURM_NTASKS='4', SLURM_LOCALID='1', SLURM_NODELIST='cn[01-02]', MASTER_PORT='1234')
    assert slurm_environment(env) == dict(RANK='3', WORLD_SIZE='4', LOCAL_RANK='1', MASTER_ADDR='127.0.0.1',
                                          MASTER_PORT='1234')


def test_eval_only_sweep_on_two_slurm_tasks_on_two_nodes_with_the_configs_timeout(slurm_bin, trained, tmp_path):
    """(mmcv's own Slurm start would raise a TypeError for the config's dist_params.timeout.)"""
    ckpts = ckpt_dir(trained, tmp_path)
    job = slurm_train(slurm_bin, tmp_path / 'sweep', '--eval-only', '--checkpoints', str(ckpts / 'epoch_*.pth'),
                      per_node=1)
    assert job.returncode == 0, job.describe()
    assert 'kradar_plugin preflight (2 rank(s))' in job.output and job.train_records() == []
    assert job.checkpoints() == [] and [r['epoch'] for r in job.val_records()] == [1, 2, 3]
    with open(osp.join(job.work_dir, 'sweep.json')) as f:
        record = json.load(f)
    assert [e['stem'] for e in record['checkpoints']] == ['epoch_1', 'epoch_2', 'epoch_3']
    for entry in record['checkpoints']:
        assert abs(entry['metrics']['toy/mae'] - mae_of(entry['checkpoint'])) < 1e-5


@launching.on_torchrun_stacks('the Slurm sweep here, and fail-fast: test_echofusion_launcher.py::'
                              'test_planted_evaluate_failure_ends_the_job_with_its_traceback')
def test_a_failing_task_ends_the_step(slurm_bin, tmp_path):
    """A task that fails during the evaluation exits at once (fail-fast); --kill-on-bad-exit ends the other."""
    job = slurm_train(slurm_bin, tmp_path / 'fail', '--eval-only', '--cfg-options', 'model.fail_on_rank=1')
    assert_ended_by_failfast(job, TOY_COLLECTIVE_TIMEOUT_S)
    assert 'planted inference failure on rank 1' in job.output and 'srun: error: task 1' in job.output
