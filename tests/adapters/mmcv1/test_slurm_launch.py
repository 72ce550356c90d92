"""The Slurm launcher path on a real Slurm cluster (``fixture_slurm``: slurmctld and two slurmd, nodes cn01 and
cn02 on this machine): ``tools/slurm_train.sh`` -> real ``srun --kill-on-bad-exit=1`` -> ``tools/train.py
--launcher slurm`` -> mmcv's ``init_dist('slurm', **dist_params)`` (kradar_plugin's: the config's timeout,
gloo on CPU, the first node's name as master address, the port derived from the job id), one task per
stand-in GPU.

What real Slurm does that a stand-in would not, and these tests assert: srun's own messages name the node
(``srun: error: cn02: task 1: Exited with exit code 1``); a failing task's siblings get SIGTERM (KillWait
later SIGKILL) and srun exits 143/137; the master address is a node name that must resolve; the node shape
(tasks per node, gres) is enforced; scancel ends every task with SIGTERM; two jobs share the nodes.
Each launch costs about a minute on two cores: the routes are combined, several assertions per launch.
"""
import glob
import json
import os
import os.path as osp
import re
import signal
import time

import pytest

from kradar_plugin.adapters.mmcv1.dist_init import slurm_environment
from kradar_plugin.distributed import inference_record as records
from tests import launching

from .fixture_slurm import SlurmLaunch, assert_ended_by_failfast_after, slurm_cluster  # noqa: F401  (fixture)
from .launch_utils import CONFIGS, TOY_COLLECTIVE_TIMEOUT_S
from .sweep_checkpoints import ckpt_dir, mae_of

pytestmark = [pytest.mark.launch]

SLURM_TOY = osp.join(CONFIGS, 'toy_slurm.py')
# rank 1 of 2 infers samples 1, 3, 5, ... one per batch: it fails in its third batch, after two recorded
FAIL_ON = 5
PLANTED = 'RuntimeError: planted inference failure on sample {}'.format(FAIL_ON)
EVALUATE_FAILED = '[rank 0/2] failed during evaluation'


def sweep_record(work_dir):
    with open(osp.join(work_dir, 'sweep.json')) as f:
        return json.load(f)


def record_files(work_dir, tag):
    return sorted(osp.basename(p) for p in glob.glob(osp.join(records.record_dir(work_dir, tag),
                                                              '*' + records.SUFFIX)))


def wait_for(path, job, limit_s=launching.HARD_LIMIT_S):
    """The pid a marker file holds, once it exists (the job still running)."""
    start = time.time()
    while not osp.exists(path):
        if not job.running() or time.time() - start > limit_s:
            raise AssertionError('{} never appeared\n{}'.format(path, job.finish(1).describe()))
        time.sleep(0.05)
    time.sleep(0.05)
    with open(path) as f:
        return int(f.read())


def test_task_environment_to_torch_distributed(slurm_cluster, monkeypatch):  # noqa: F811
    """The real scontrol gives the first node's NAME (it must resolve: the hosts file); the port comes from the
    job id, outside Linux's ephemeral ports."""
    monkeypatch.setenv('PATH', slurm_cluster.env['PATH'])
    monkeypatch.setenv('SLURM_CONF', slurm_cluster.conf)
    env = dict(SLURM_PROCID='3', SLURM_NTASKS='4', SLURM_LOCALID='1', SLURM_NODELIST='cn[01-02]',
               SLURM_JOB_ID='123456')
    assert slurm_environment(env) == dict(RANK='3', WORLD_SIZE='4', LOCAL_RANK='1', MASTER_ADDR='cn01',
                                          MASTER_PORT='23456')


def test_a_shape_the_nodes_cannot_give_is_refused_with_slurms_reason(slurm_cluster, tmp_path):  # noqa: F811
    job = SlurmLaunch(slurm_cluster, tmp_path / 'x', '--eval-only', tasks=8, per_node=8).run()
    assert job.returncode == 2, job.describe()
    assert 'Slurm refuses GPUS=8 GPUS_PER_NODE=8' in job.output, job.describe()
    assert 'Requested node configuration is not available' in job.output      # Slurm's own words
    assert '2 node(s) with gres gpu:4' in job.output, job.describe()
    assert 'Traceback' not in job.output


def test_two_jobs_at_once_sweep_on_two_nodes_and_failing_eval_first(slurm_cluster, trained, tmp_path):  # noqa: F811
    """Without PORT, side by side on the same nodes: a 3-checkpoint eval-only sweep on two nodes (one task
    each) gives each checkpoint's metric; an eval-first run on one node (two tasks) whose evaluate raises on
    rank 0 is ended by fail-fast, and srun names the node and task."""
    ckpts = ckpt_dir(trained, tmp_path)
    sweep = SlurmLaunch(slurm_cluster, tmp_path / 'sweep', '--eval-only', '--checkpoints',
                        str(ckpts / 'epoch_*.pth'))
    failing = SlurmLaunch(slurm_cluster, tmp_path / 'evalfirst', '--eval-first', '--cfg-options',
                          'data.val.fail_in=evaluate', per_node=2, watch=(EVALUATE_FAILED,))
    sweep.start()
    failing.start()
    together = False
    while any([sweep.running(), failing.running()]):   # each looks (and times its watched text) every time
        states = [set(j.cluster.jobs(j.name).values()) for j in (sweep, failing)]
        together = together or all('RUNNING' in s for s in states)
        time.sleep(0.5)
    done, failed = sweep.finish(), failing.finish()
    assert together, 'the two jobs never ran at the same time\n{}\n{}'.format(done.describe(), failed.describe())

    assert done.returncode == 0, done.describe()
    assert 'kradar_plugin preflight (2 rank(s))' in done.output and done.train_records() == []
    assert [r['epoch'] for r in done.val_records()] == [1, 2, 3]
    record = sweep_record(done.work_dir)
    assert [e['stem'] for e in record['checkpoints']] == ['epoch_1', 'epoch_2', 'epoch_3']
    for entry in record['checkpoints']:
        assert abs(entry['metrics']['toy/mae'] - mae_of(entry['checkpoint'])) < 1e-5

    failfast_s = assert_ended_by_failfast_after(failed, EVALUATE_FAILED, TOY_COLLECTIVE_TIMEOUT_S)
    assert 'RuntimeError: planted evaluate failure' in failed.output
    assert re.search(r'srun: error: cn0[12]: task 0: Exited with exit code 1', failed.output), failed.describe()
    assert failed.train_records() == [], 'eval-first trained after a failed first evaluation'
    print('\n[slurm] two jobs at once: sweep {:.1f} s, failing eval-first {:.1f} s (rc {}, ended {:.1f} s after the '
          'failure)'.format(done.elapsed, failed.elapsed, failed.returncode, failfast_s))


def test_planted_failure_on_rank_1_then_resume_from_the_flushed_records(slurm_cluster, trained, tmp_path):  # noqa: F811
    """Rank 1 (on cn02) raises on a sample: it names the sample and leaves (fail-fast); srun ends rank 0, which
    is mid-inference, with SIGTERM, and rank 0's handler flushes its partial record first. The relaunch
    continues from both ranks' records and gives the checkpoint's metric."""
    ckpts = ckpt_dir(trained, tmp_path, (1,))
    work = tmp_path / 'work'
    flags = ['--eval-only', '--checkpoints', str(ckpts / 'epoch_1.pth'), '--cfg-options']
    job = SlurmLaunch(slurm_cluster, work, *(flags + ['model.fail_on_sample={}'.format(FAIL_ON),
                                                      'model.slow_ranks=[0,1]', 'model.sleep_s=1.0']),
                      config=SLURM_TOY, watch=(PLANTED,)).run()
    failfast_s = assert_ended_by_failfast_after(job, PLANTED, TOY_COLLECTIVE_TIMEOUT_S)
    assert job.returncode in (143, 137), job.describe()   # the last task ended by srun's SIGTERM (or SIGKILL)
    assert 'srun: error: cn02: task 1: Exited with exit code 1' in job.output, job.describe()
    assert 'the model failed on rank 1 on a batch of 1: dataset index {0} (sample_idx {0})'.format(
        FAIL_ON) in job.output, job.describe()
    assert re.search(r'srun: error: cn01: task 0: (Terminated|Killed)', job.output), job.describe()
    files = record_files(str(work), 'epoch_1')
    assert len(files) == 2, (files, job.describe())   # rank 1's, written as it failed, and rank 0's, on SIGTERM

    again = SlurmLaunch(slurm_cluster, work, *(flags + ['model.fail_on_sample=None']), config=SLURM_TOY).run()
    assert again.returncode == 0, again.describe()
    resumed = re.search(r'resuming from the partial record in .*: (\d+) of 5 samples of this rank recorded',
                        again.output)
    assert resumed and int(resumed.group(1)) >= 2, again.describe()      # rank 0's, flushed on SIGTERM
    entry = sweep_record(again.work_dir)['checkpoints'][0]
    assert entry['status'] == 'ok' and abs(entry['metrics']['toy/mae'] - mae_of(entry['checkpoint'])) < 1e-5
    print('\n[slurm] planted failure: the job ran {:.1f} s, ended {:.1f} s after the failure (rc {}); resumed run '
          '{:.1f} s'.format(job.elapsed, failfast_s, job.returncode, again.elapsed))


@launching.on_torchrun_stacks('the Slurm routes above (the lost task and scancel are the launcher\'s, not the '
                              'stack\'s)')
def test_a_killed_task_and_a_cancelled_job_at_once(slurm_cluster, trained, tmp_path):  # noqa: F811
    """Two jobs side by side: SIGKILL of the task on cn02 (the OOM killer's signal) mid-inference ends the
    first by fail-fast, srun naming the node and task; scancel of the second mid-inference ends every task
    with SIGTERM, which flushes each rank's partial record."""
    ckpts = ckpt_dir(trained, tmp_path, (1,))
    flags = ['--eval-only', '--checkpoints', str(ckpts / 'epoch_1.pth'), '--cfg-options',
             'model.slow_ranks=[0,1]', 'model.sleep_s=2.0']
    markers = {}
    for name in ('killed', 'cancelled'):
        markers[name] = tmp_path / ('markers_' + name)
        markers[name].mkdir()
    killed = SlurmLaunch(slurm_cluster, tmp_path / 'killed', *flags, config=SLURM_TOY,
                         env={'TOY_MARKER_DIR': str(markers['killed'])}).start()
    cancelled = SlurmLaunch(slurm_cluster, tmp_path / 'cancelled', *flags, config=SLURM_TOY, per_node=2,
                            env={'TOY_MARKER_DIR': str(markers['cancelled'])}).start()
    victim = wait_for(str(markers['killed'] / 'infer.1.2'), killed)
    kill_time = time.time()
    os.kill(victim, signal.SIGKILL)
    wait_for(str(markers['cancelled'] / 'infer.1.2'), cancelled)
    cancelled.scancel()
    lost, ended = killed.finish(), cancelled.finish()

    kill_to_exit = lost.elapsed - (kill_time - killed.started)
    assert lost.returncode != 0, lost.describe()
    assert kill_to_exit < TOY_COLLECTIVE_TIMEOUT_S, lost.describe()
    assert not [s for s in launching.TIMEOUT_SIGNATURES if s in lost.output], lost.describe()
    assert 'srun: error: cn02: task 1: Killed' in lost.output, lost.describe()

    assert ended.returncode != 0, ended.describe()
    assert re.search(r'STEP \d+\.0 ON \S+ CANCELLED AT', ended.output), ended.describe()
    assert len(record_files(ended.work_dir, 'epoch_1')) == 2, ended.describe()   # both ranks flushed on SIGTERM
    print('\n[slurm] SIGKILL of task 1 on cn02: srun ended {:.1f} s after the kill (rc {}); scancel: rc {}\n{}'.format(
        kill_to_exit, lost.returncode, ended.returncode, '\n'.join(
            line for line in (lost.output + ended.output).splitlines() if re.match(r'(srun|slurmstepd|\[rank)', line)
            and 'Traceback' not in line)))
