"""Two nodes, and a rank lost to SIGKILL, with the real launchers: ``torchrun`` on torch >= 2 and
``torch.distributed.launch`` on torch < 2 (EchoFusion's stack), one launcher process per node (``--nnodes 2
--node_rank 0/1``), two gloo worker processes each, our tools/train.py and the toy model on CPU. The two nodes
are two hosts (``fixture_hosts``: network namespaces with their own addresses 10.250.0.1/.2 and host names;
rendezvous on 10.250.0.1), so gloo connects across a real link; skipped with the reason where namespaces
cannot be made.

- a sweep across the two nodes gives, checkpoint by checkpoint, the metrics of a one-process sweep;
- a host whose name resolves to loopback (the classic pitfall): the rank that cannot connect at init names
  the address it tried, the host name's address, gloo's interface and the fix, and every node ends at once;
- SIGKILL of one worker (as the kernel's OOM killer does) during inference, and separately while it waits in
  the result collection, on a one-node job and on the second node of a two-node job: the job ends by
  fail-fast, before the collective timeout and with no timeout reported; the output names the lost rank
  and its signal; the finished checkpoint's predictions and record stay on disk. The kill-to-exit time is
  printed (``-s`` shows it; benchmarks/README.md lists the measured values).
"""
import glob
import json
import os
import os.path as osp
import re
import signal
import sys
import time

import pytest
import torch

from tests import launching
from tests.launching import TIMEOUT_SIGNATURES, Nodes, free_port, launcher_cmd

from .fixture_hosts import ADDRESSES, two_hosts, two_hosts_named_loopback, two_hosts_or_skip  # noqa: F401
from .launch_utils import CONFIGS, ROOT, TOY, TOY_COLLECTIVE_TIMEOUT_S
from .sweep_checkpoints import TRAIN, ckpt_dir, mae_of

pytestmark = [pytest.mark.launch]

TORCH_MAJOR = int(torch.__version__.split('.')[0])
LAUNCHER = 'torchrun' if TORCH_MAJOR >= 2 else 'launch'
MARKERS = osp.join(CONFIGS, 'toy_markers.py')
PER_NODE = 2
SAMPLES = 9          # the toy validation set
BATCH = 1            # its validation batch size (mmdet's val loader: samples_per_gpu 1 unless set)


def nodes_job(tmp_path, nnodes, flags, env=None, config=MARKERS, hosts=None):
    """One launcher per node; on ``hosts`` (two network namespaces) node n runs on host n."""
    port = free_port()
    work = str(tmp_path / 'work')
    addr = ADDRESSES[0] if hosts else '127.0.0.1'
    cmds = [(hosts.prefix(n, ROOT) if hosts else []) +
            launcher_cmd(PER_NODE, TRAIN, config, '--launcher', 'pytorch', '--work-dir', work, '--no-doctor',
                         *flags, nnodes=nnodes, node_rank=n, port=port, launcher=LAUNCHER, master_addr=addr)
            for n in range(nnodes)]
    return Nodes(cmds, work, env=env)


def sweep_record(work_dir):
    with open(osp.join(work_dir, 'sweep.json')) as f:
        return json.load(f)


@launching.on_torchrun_stacks('test_echofusion_sweep.py (a sweep of the project on one node, then on two)')
def test_a_sweep_across_two_hosts_equals_one_process(trained, tmp_path, two_hosts):  # noqa: F811
    ckpts = ckpt_dir(trained, tmp_path)
    flags = ['--eval-only', '--checkpoints', str(ckpts / 'epoch_*.pth')]
    job = nodes_job(tmp_path / 'two', 2, flags, config=osp.join(CONFIGS, 'toy.py'), hosts=two_hosts).start().finish()
    assert job.returncodes == [0, 0], job.describe()
    assert 'kradar_plugin preflight (4 rank(s))' in job.output
    one = launching.run([sys.executable, TRAIN, osp.join(CONFIGS, 'toy.py'), '--work-dir', str(tmp_path / 'one'),
                         '--no-doctor'] + flags, str(tmp_path / 'one'))
    assert one.returncode == 0, one.describe()
    two_nodes, one_process = sweep_record(job.work_dir), sweep_record(one.work_dir)
    assert [e['stem'] for e in two_nodes['checkpoints']] == ['epoch_1', 'epoch_2', 'epoch_3']
    for a, b in zip(two_nodes['checkpoints'], one_process['checkpoints']):
        assert a['metrics'] == b['metrics'], (a, b)
        assert abs(a['metrics']['toy/mae'] - mae_of(a['checkpoint'])) < 1e-5
    assert two_nodes['best'] == one_process['best']


def wait_for(path, job, limit_s=launching.HARD_LIMIT_S):
    start = time.time()
    while not osp.exists(path):
        if not job.running() or time.time() - start > limit_s:
            job.finish(1)
            raise AssertionError('{} never appeared\n{}'.format(path, job.describe()))
        time.sleep(0.05)
    with open(path) as f:
        return int(f.read())


def lost_rank_names(output, rank, local_rank):
    """The launcher's failure summary names the rank (torchrun: ``rank : 3 (local_rank: 1)``) and SIGKILL."""
    named = re.search(r'rank\s*:\s*{} \(local_rank: {}\)'.format(rank, local_rank), output)
    return bool(named) and ('SIGKILL' in output or 'Signal 9' in output)


# make test runs one lost rank per stack: here the second node's, while it waits in the result collection (the
# plugin's fail-fast: on one node the launcher's agent ends the job itself), under torchrun; on torch < 2
# test_echofusion_sweep.py kills the second node's worker of EchoFusion's own train.py during a sweep. The other
# cases are the benchmark's (marker bench; benchmarks/README.md runs them all with -k sigkill).
BENCH = pytest.mark.bench


@pytest.mark.parametrize('stage', [pytest.param('inference', marks=BENCH),
                                   pytest.param('collection', marks=[BENCH] if TORCH_MAJOR < 2 else [])])
@pytest.mark.parametrize('nnodes', [pytest.param(1, marks=BENCH), 2])
def test_sigkill_of_a_worker_ends_the_job_by_failfast(trained, tmp_path, stage, nnodes):
    world = nnodes * PER_NODE
    victim = world - 1                                   # on the last node (the second one of two)
    batches = -(-(-(-SAMPLES // world)) // BATCH)        # inference batches per rank and evaluation
    ckpts = ckpt_dir(trained, tmp_path, (1, 2))
    markers = tmp_path / 'markers'
    markers.mkdir()
    slow = list(range(world)) if stage == 'inference' else [r for r in range(world) if r != victim]
    flags = ['--eval-only', '--checkpoints', str(ckpts / 'epoch_*.pth'), '--cfg-options',
             'model.slow_ranks={}'.format(slow).replace(' ', '')]
    hosts = two_hosts_or_skip() if nnodes == 2 else None
    try:
        job = nodes_job(tmp_path, nnodes, flags, env={'TOY_MARKER_DIR': str(markers)}, hosts=hosts).start()
        lost_rank_ends_the_job(job, tmp_path, stage, nnodes, world, victim, batches, markers)
    finally:
        if hosts:
            hosts.stop()


def lost_rank_ends_the_job(job, tmp_path, stage, nnodes, world, victim, batches, markers):
    # the second checkpoint's first inference batch on the victim, or the victim in its second collection
    marker = 'infer.{}.{}'.format(victim, batches + 1) if stage == 'inference' else 'collect.{}.2'.format(victim)
    pid = wait_for(str(markers / marker), job)
    killed = time.time()
    os.kill(pid, signal.SIGKILL)
    job.finish()
    kill_to_exit = max(job.ended) - killed
    print('\n[lost rank] {} torch {}: {} node(s), SIGKILL of rank {} during {}: every launcher ended {:.1f} s '
          'after the kill (per node: {})'.format(LAUNCHER, torch.__version__, nnodes, victim, stage, kill_to_exit,
                                                 ', '.join('{:.1f} s'.format(e - killed) for e in job.ended)))
    assert all(rc != 0 for rc in job.returncodes), job.describe()
    assert kill_to_exit < TOY_COLLECTIVE_TIMEOUT_S, 'ran into the {} s collective timeout\n{}'.format(
        TOY_COLLECTIVE_TIMEOUT_S, job.describe())
    hit = [s for s in TIMEOUT_SIGNATURES if s in job.output]
    assert not hit, 'a timeout ended the job ({})\n{}'.format(hit, job.describe())
    assert lost_rank_names(job.outputs[-1], victim, victim % PER_NODE), job.describe()
    if nnodes == 2:  # the first node's ranks see every local worker alive: the lost one is elsewhere
        assert 'lost a peer on another node ([{}]:'.format(ADDRESSES[1]) in job.outputs[0], job.describe()
    # the first checkpoint was finished before the kill: its record and predictions stay
    record = sweep_record(job.work_dir)
    assert [(e['stem'], e['status']) for e in record['checkpoints']] == [('epoch_1', 'ok')], record
    assert [osp.basename(p) for p in glob.glob(osp.join(job.work_dir, 'eval_results', '*.pkl'))] == [
        'results_epoch_1.pkl']


@launching.on_torchrun_stacks('test_a_sweep_across_two_hosts_equals_one_process (the same init, named here)')
def test_a_host_name_resolving_to_loopback_is_named_and_every_node_ends(tmp_path,
                                                                        two_hosts_named_loopback):  # noqa: F811
    """Each host's name resolves to 127.0.1.1 there: gloo advertises a loopback address, and the rank that
    connects to it is refused. That rank names the address it tried, what its host name resolves to, gloo's
    interface and the fix; the ranks waiting for it (the other node) leave at once instead of waiting out the
    timeout; nobody blames "another rank" (no rank was lost). One worker per node, our dist_train.sh."""
    hosts = two_hosts_named_loopback
    work = str(tmp_path / 'work')
    port = free_port()
    cmds = [hosts.prefix(n, ROOT) + ['env', 'NODE_RANK={}'.format(n), 'bash', osp.join(ROOT, 'tools', 'dist_train.sh'),
                               TOY, '1', '--work-dir', work, '--no-doctor', '--eval-only'] for n in range(2)]
    env = {'NNODES': '2', 'MASTER_ADDR': ADDRESSES[0], 'PORT': str(port)}
    job = Nodes(cmds, work, env=env).start().finish()
    took = max(job.ended) - job.started
    print('\n[two hosts] host names resolving to loopback: both nodes ended {:.1f} s after the start (per node: '
          '{})'.format(took, ', '.join('{:.1f} s'.format(e - job.started) for e in job.ended)))
    assert all(rc != 0 for rc in job.returncodes), job.describe()
    assert took < TOY_COLLECTIVE_TIMEOUT_S, 'a node waited into the {} s timeout\n{}'.format(
        TOY_COLLECTIVE_TIMEOUT_S, job.describe())
    assert 'another rank failed first' not in job.output, job.describe()
    named = [i for i, out in enumerate(job.outputs)
             if 'could not connect to the other ranks while starting the process group' in out]
    assert len(named) == 1, job.describe()
    out, other = job.outputs[named[0]], job.outputs[1 - named[0]]
    assert re.search(r'address tried: \[127\.0\.1\.1\]:\d+ \(loopback', out), job.describe()
    assert "this host: '{}' resolves to 127.0.1.1 (loopback)".format(hosts.names[named[0]]) in out
    assert "gloo's interface: GLOO_SOCKET_IFNAME not set" in out
    assert 'GLOO_SOCKET_IFNAME={}'.format(hosts.links[named[0]]) in out and 'MASTER_ADDR' in out
    assert re.search(r'could not connect at init \(address tried: \[127\.0\.1\.1\]:\d+\)', other), job.describe()
