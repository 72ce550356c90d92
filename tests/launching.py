"""The one launch helper of the suite: real training jobs as subprocesses (torchrun, torch.distributed.launch,
dist_train.sh; gloo on CPU), with the KRADAR_* switches of the test process cleared, and what they printed.

Time checks are relative: a failing job must end by fail-fast, before the collective timeout it was given
(``assert_ended_by_failfast``), never within an absolute number of seconds, which a loaded machine breaks.
"""
import os
import os.path as osp
import signal
import socket
import subprocess
import sys
import time
from queue import Empty

from kradar_plugin import runner_options

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
HARD_LIMIT_S = 300  # a hung job fails its test instead of hanging the suite; above every collective timeout
# what torch prints when a collective or the rendezvous ran into its timeout (gloo, NCCL, the c10d store)
TIMEOUT_SIGNATURES = ('Timed out waiting', 'Socket Timeout', 'Watchdog caught collective operation timeout',
                      'DistNetworkError', 'timed out after')


def on_torchrun_stacks(covered_by):
    """Skip a launch on EchoFusion's stack (torch < 2), where ``covered_by`` launches the same route the way
    EchoFusion users launch it (mmdet3d 0.17.3's train.py under torch.distributed.launch): one launch per route
    and stack."""
    import pytest
    import torch
    return pytest.mark.skipif(int(torch.__version__.split('.')[0]) < 2,
                              reason="EchoFusion's stack: this route is launched there by " + covered_by)


# [node id, marked launch?] of the running test (tests/conftest.py); empty outside a test
CURRENT_TEST = []


def _check_marked():
    """A launch beside other pytest-xdist workers must come from a test marked ``launch`` (make test runs those
    one at a time, after the parallel run): anything else is a test that lacks the marker."""
    workers = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1') or 1)
    if workers > 1 and CURRENT_TEST and not CURRENT_TEST[1]:
        raise RuntimeError('{} launches a training job but is not marked @pytest.mark.launch: launches run one at '
                           'a time, never beside the {} parallel workers (tests/conftest.py)'.format(
                               CURRENT_TEST[0], workers))


class Job(object):
    """A finished launch: exit code, everything it printed (stdout and stderr), wall time, work dir."""

    def __init__(self, returncode, output, elapsed, work_dir):
        self.returncode = returncode
        self.output = output
        self.elapsed = elapsed
        self.work_dir = str(work_dir)

    def describe(self, tail=8000):
        return 'rc={} after {:.1f}s\n{}'.format(self.returncode, self.elapsed, self.output[-tail:])


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def gather(queue, procs, count, limit_s=HARD_LIMIT_S):
    """``count`` items from ``queue``, which ``procs`` (multiprocessing children) fill; the children are then
    joined and must exit 0. A child that ends without its item fails the test at once, naming its exit
    code; only a hang waits for ``limit_s`` (a fixed short wait fails on a loaded machine, where spawning
    and importing torch can take a minute)."""
    items = []
    deadline = time.time() + limit_s
    while len(items) < count:
        try:
            items.append(queue.get(timeout=1))
            continue
        except Empty:
            pass
        dead = [(p.name, p.exitcode) for p in procs if p.exitcode not in (None, 0)]
        assert not dead, 'children ended before sending their result: {}'.format(dead)
        assert time.time() < deadline, '{} of {} results after {} s'.format(len(items), count, limit_s)
    for p in procs:
        p.join(max(1, deadline - time.time()))
    assert [p.exitcode for p in procs] == [0] * len(procs), [(p.name, p.exitcode) for p in procs]
    return items


def job_env(extra=None, pythonpath=()):
    """The test process's environment without any KRADAR_* switch, ROOT (and ``pythonpath``) first on
    PYTHONPATH, unbuffered output, the running interpreter as $PYTHON; ``extra`` last."""
    env = dict(os.environ)
    for key in runner_options.SWITCHES:
        env.pop(key, None)
    paths = [str(p) for p in pythonpath] + [ROOT] + ([env['PYTHONPATH']] if env.get('PYTHONPATH') else [])
    env['PYTHONPATH'] = os.pathsep.join(paths)
    env['PYTHON'] = sys.executable
    env['PYTHONUNBUFFERED'] = '1'
    env.update(extra or {})
    return env


def run(cmd, work_dir, cwd=ROOT, env=None, pythonpath=(), job_class=Job, limit_s=HARD_LIMIT_S):
    """Run ``cmd`` to its end (at most ``limit_s``) and return a ``job_class``."""
    _check_marked()
    start = time.time()
    proc = subprocess.Popen(cmd, cwd=str(cwd), env=job_env(env, pythonpath), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        kill_session(proc)     # the launcher and its workers: a hung worker left behind slows every later test
        proc.communicate()
        raise
    return job_class(proc.returncode, out.decode('utf-8', 'replace'), time.time() - start, work_dir)


def kill_session(proc):
    """SIGKILL every process of ``proc``'s session (started with ``start_new_session=True``), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def torchrun_cmd(nproc, target, *args):
    """``python -m torch.distributed.run --nproc_per_node N --master_port P TARGET ARGS`` (``target``: a
    script path, or ``['--module', name]``)."""
    target = list(target) if isinstance(target, (list, tuple)) else [target]
    return [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node={}'.format(nproc),
            '--master_port={}'.format(free_port()), '--monitor_interval=1'] + target + [str(a) for a in args]


def assert_ended_by_failfast(job, collective_timeout_s):
    """The job failed, and fail-fast ended it: before the process-group timeout it ran with (a rank waiting
    for a dead peer would have held it that long) and with no timeout reported."""
    assert job.returncode != 0, job.describe()
    assert job.elapsed < collective_timeout_s, (
        'the job ran {:.0f}s, into its {}s collective timeout: not ended by fail-fast\n{}'.format(
            job.elapsed, collective_timeout_s, job.describe()))
    hit = [s for s in TIMEOUT_SIGNATURES if s in job.output]
    assert not hit, 'a timeout ended the job ({})\n{}'.format(hit, job.describe())


def launcher_cmd(nproc, target, *args, nnodes=1, node_rank=0, port=None, launcher='torchrun',
                 master_addr='127.0.0.1'):
    """One node's launcher command: ``torchrun`` (``python -m torch.distributed.run``, as our
    dist_train.sh: ``--monitor_interval=1``) or ``launch`` (``python -m torch.distributed.launch`` with its
    defaults, as EchoFusion's dist_train.sh), rendezvous on ``master_addr``:``port``."""
    module = 'torch.distributed.run' if launcher == 'torchrun' else 'torch.distributed.launch'
    cmd = [sys.executable, '-m', module, '--nnodes={}'.format(nnodes), '--node_rank={}'.format(node_rank),
           '--nproc_per_node={}'.format(nproc), '--master_addr={}'.format(master_addr),
           '--master_port={}'.format(port)]
    if launcher == 'torchrun':
        cmd.append('--monitor_interval=1')
    return cmd + [target] + [str(a) for a in args]


class Nodes(object):
    """Several launcher processes started side by side (one per simulated node) and what each printed.

    ``start``, then optionally ``wait_for(predicate)`` / ``kill_time`` bookkeeping by the caller, then
    ``finish()``: every launcher's exit code and output, and the time each ended."""

    def __init__(self, cmds, work_dir, cwd=ROOT, env=None, pythonpath=()):
        self.cmds = cmds
        self.work_dir = str(work_dir)
        self.cwd = str(cwd)
        self.env = job_env(env, pythonpath)
        self.procs = []
        self.files = []
        self.ended = []

    def start(self):
        import tempfile
        _check_marked()
        self.started = time.time()
        for cmd in self.cmds:
            out = tempfile.TemporaryFile()
            self.files.append(out)
            self.procs.append(subprocess.Popen(cmd, cwd=self.cwd, env=self.env, stdout=out,
                                               stderr=subprocess.STDOUT, start_new_session=True))
        return self

    def running(self):
        return any(p.poll() is None for p in self.procs)

    def printed_so_far(self, node):
        """What launcher ``node`` has printed until now."""
        f = self.files[node]
        f.flush()
        with open('/proc/self/fd/{}'.format(f.fileno()), 'rb') as again:
            return again.read().decode('utf-8', 'replace')

    def workers(self, node):
        """The pids of launcher ``node``'s worker processes (its children; Linux /proc)."""
        pids = []
        for name in os.listdir('/proc'):
            if name.isdigit():
                try:
                    with open('/proc/{}/stat'.format(name)) as f:
                        fields = f.read().rsplit(')', 1)[1].split()
                except (OSError, IndexError):
                    continue
                if fields[1] == str(self.procs[node].pid) and fields[0] not in ('Z', 'X'):
                    pids.append(int(name))
        return sorted(pids)

    def finish(self, limit_s=HARD_LIMIT_S):
        """Wait for every launcher (killing all of them after ``limit_s``); returns self."""
        self.ended = [None] * len(self.procs)
        while True:
            now = time.time()
            for i, p in enumerate(self.procs):
                if self.ended[i] is None and p.poll() is not None:
                    self.ended[i] = now
            if all(e is not None for e in self.ended):
                break
            if now - self.started > limit_s:
                for p in self.procs:
                    if p.poll() is None:
                        kill_session(p)
            time.sleep(0.05)
        self.returncodes = [p.returncode for p in self.procs]
        self.outputs = []
        for f in self.files:
            f.seek(0)
            self.outputs.append(f.read().decode('utf-8', 'replace'))
            f.close()
        return self

    @property
    def output(self):
        return '\n'.join('===== node {} (rc={}) =====\n{}'.format(i, rc, out)
                         for i, (rc, out) in enumerate(zip(self.returncodes, self.outputs)))

    def describe(self, tail=6000):
        return '\n'.join('===== node {} rc={} =====\n{}'.format(i, rc, out[-tail:])
                         for i, (rc, out) in enumerate(zip(self.returncodes, self.outputs)))
