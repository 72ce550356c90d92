"""A real Slurm cluster for the Slurm launch tests, and the launch helper for its jobs.

``slurm_cluster`` (session): munged, slurmctld and two slurmd (nodes cn01, cn02 on this machine, 4 CPUs and
4 stand-in GPUs each) started by ``tools/slurm_cluster.sh`` and stopped at the end of the session. Debian's
packages are installed with apt first where the machine allows it (root, apt-get; about 16 s); elsewhere the
tests skip with the reason. ``SlurmLaunch``: one ``tools/slurm_train.sh`` job started in its own session; a job
past its time limit is cancelled with ``scancel`` (killing srun alone leaves the tasks running under slurmstepd)
and its launcher killed.
"""
import os
import os.path as osp
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

from tests import launching

from .launch_utils import ROOT, TOY, Job

SCRIPT = osp.join(ROOT, 'tools', 'slurm_cluster.sh')
SLURM_TRAIN = osp.join(ROOT, 'tools', 'slurm_train.sh')
PACKAGES = ['slurmctld', 'slurmd', 'slurm-client', 'munge']
BINARIES = ('munged', 'slurmctld', 'slurmd', 'srun', 'scontrol', 'sinfo', 'squeue', 'scancel')
NODES = ('cn01', 'cn02')
SBIN_PATH = os.environ.get('PATH', '') + os.pathsep + '/usr/sbin'


def _missing():
    return [b for b in BINARIES if shutil.which(b, path=SBIN_PATH) is None]


def _last_line(text):
    lines = [line for line in text.decode('utf-8', 'replace').splitlines() if line.strip()]
    return lines[-1] if lines else 'no output'


def install_reason():
    """None when Slurm's binaries are there (installed now with apt if need be); else why the tests skip."""
    missing = _missing()
    if not missing:
        return None
    if not sys.platform.startswith('linux'):
        return 'a real Slurm needs Linux'
    if os.geteuid() != 0:
        return 'Slurm is not installed ({} missing) and installing it or running slurmd needs root'.format(
            ', '.join(missing))
    if shutil.which('apt-get') is None:
        return 'Slurm is not installed ({} missing) and there is no apt-get to install {}'.format(
            ', '.join(missing), ' '.join(PACKAGES))
    install = ['apt-get', 'install', '-y', '--no-install-recommends'] + PACKAGES
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    done = subprocess.run(install, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:   # no package lists yet: read them once, then try again
        subprocess.run(['apt-get', 'update'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        done = subprocess.run(install, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0 or _missing():
        return '`{}` failed (exit status {}): {}'.format(' '.join(install), done.returncode,
                                                         _last_line(done.stdout))
    return None


class Cluster(object):
    """A started cluster: its slurm.conf, node names, start-up time and the environment its clients need."""

    def __init__(self, conf, startup_s):
        self.conf = conf
        self.nodes = NODES
        self.startup_s = startup_s
        self.env = {'SLURM_CONF': conf, 'PATH': SBIN_PATH}

    def command(self, *args):
        """A Slurm client command's output (scontrol, squeue, ...)."""
        return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=dict(os.environ, **self.env), universal_newlines=True).stdout

    def jobs(self, name):
        """{job id: state} of the jobs called ``name``."""
        out = self.command('squeue', '-h', '-n', name, '-o', '%i %T')
        return dict(line.split() for line in out.splitlines() if len(line.split()) == 2)


@pytest.fixture(scope='session')
def slurm_cluster():
    reason = install_reason()
    if reason:
        pytest.skip(reason)
    start = time.time()
    done = subprocess.run(['bash', SCRIPT, 'start', str(len(NODES))], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, GPUS='4', CPUS='4', PATH=SBIN_PATH))
    assert done.returncode == 0, 'tools/slurm_cluster.sh start failed:\n{}{}'.format(done.stdout, done.stderr)
    conf = done.stdout.strip().rsplit('SLURM_CONF=', 1)[1]
    cluster = Cluster(conf, time.time() - start)
    print('\n[slurm] cluster of {} nodes answering {:.1f} s after start'.format(len(NODES), cluster.startup_s))
    try:
        yield cluster
    finally:
        stop = subprocess.run(['bash', SCRIPT, 'stop', osp.dirname(conf)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, env=dict(os.environ, PATH=SBIN_PATH))
        assert stop.returncode == 0, stop.stdout


def assert_ended_by_failfast_after(job, text, collective_timeout_s):
    """The job failed, and fail-fast ended it after ``text`` (the planted failure) was printed: sooner than the
    process-group timeout, with no timeout reported. Timed from the failure, not from the start: a loaded
    machine can take minutes to start a stack (EchoFusion's imports), which says nothing about fail-fast."""
    assert job.returncode != 0, job.describe()
    assert text in job.seen, '{!r} never printed\n{}'.format(text, job.describe())
    after = job.elapsed - job.seen[text]
    assert after < collective_timeout_s, 'the job ran {:.0f} s after {!r}, into its {} s collective timeout\n{}'.format(
        after, text, collective_timeout_s, job.describe())
    hit = [s for s in launching.TIMEOUT_SIGNATURES if s in job.output]
    assert not hit, 'a timeout ended the job ({})\n{}'.format(hit, job.describe())
    return after


class SlurmLaunch(object):
    """``tools/slurm_train.sh cpu NAME CONFIG WORK_DIR --no-doctor FLAGS`` with ``tasks`` tasks, ``per_node`` a
    node (``GPUS``/``GPUS_PER_NODE``), one CPU each, no PORT unless ``port``: start, then finish."""

    def __init__(self, cluster, work_dir, *flags, tasks=2, per_node=1, config=TOY, env=None, port=None, watch=()):
        self.cluster = cluster
        self.name = 'kradar-' + uuid.uuid4().hex[:8]
        self.work_dir = str(work_dir)
        self.cmd = ['bash', SLURM_TRAIN, 'cpu', self.name, config, self.work_dir, '--no-doctor'] + list(flags)
        self.env = dict(cluster.env, GPUS=str(tasks), GPUS_PER_NODE=str(per_node), CPUS_PER_TASK='1')
        if port:
            self.env['PORT'] = str(port)
        self.env.update(env or {})
        self.proc = None
        self.ended = None
        self.watch = tuple(watch)   # texts whose first appearance in the output is timed (job.seen)
        self.seen = {}

    def start(self):
        launching._check_marked()
        self.out = tempfile.TemporaryFile()
        self.started = time.time()
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=launching.job_env(self.env), stdout=self.out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def running(self):
        """True while srun runs; the first look that finds it ended records the end time. Each look also
        times the watched texts that appeared since the last one."""
        alive = self.proc.poll() is None
        if len(self.seen) < len(self.watch):
            now = time.time()
            printed = self.printed_so_far()
            for text in self.watch:
                if text not in self.seen and text in printed:
                    self.seen[text] = now - self.started
        if alive:
            return True
        if self.ended is None:
            self.ended = time.time()
        return False

    def job_ids(self):
        return sorted(self.cluster.jobs(self.name))

    def scancel(self):
        return self.cluster.command('scancel', '-n', self.name)

    def printed_so_far(self):
        self.out.flush()
        with open('/proc/self/fd/{}'.format(self.out.fileno()), 'rb') as again:
            return again.read().decode('utf-8', 'replace')

    def finish(self, limit_s=launching.HARD_LIMIT_S):
        """Wait for srun (at most ``limit_s``: then scancel and kill); a ``launch_utils.Job`` with ``seen``:
        {watched text: seconds after the start it was first printed}."""
        while self.running():
            if time.time() - self.started > limit_s:
                self.scancel()
                launching.kill_session(self.proc)
            time.sleep(0.1)
        output = self.printed_so_far()
        self.out.close()
        job = Job(self.proc.returncode, output, self.ended - self.started, self.work_dir)
        job.seen = dict(self.seen)
        return job

    def run(self, limit_s=launching.HARD_LIMIT_S):
        return self.start().finish(limit_s)
