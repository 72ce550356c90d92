"""Launch real training jobs (torchrun, gloo, CPU) for the runner tests and read what they logged."""
import glob
import json
import os
import os.path as osp
import subprocess
import sys
import time

from kradar_plugin.distributed.eval_mode import ENV_VARS

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
CONFIGS = osp.join(ROOT, 'tests', 'runner', 'configs')
TOY = osp.join(CONFIGS, 'toy.py')
HARD_LIMIT_S = 120  # a hung job fails the test instead of hanging the suite


class Job(object):
    def __init__(self, returncode, output, elapsed, work_dir):
        self.returncode = returncode
        self.output = output
        self.elapsed = elapsed
        self.work_dir = work_dir

    def json_records(self):
        records = []
        for path in sorted(glob.glob(osp.join(self.work_dir, '*.log.json'))):
            with open(path) as f:
                records.extend(json.loads(line) for line in f if line.strip())
        return [r for r in records if 'mode' in r]

    def val_records(self):
        return [r for r in self.json_records() if r['mode'] == 'val']

    def train_records(self):
        return [r for r in self.json_records() if r['mode'] == 'train']

    def checkpoints(self):
        return sorted(osp.basename(p) for p in glob.glob(osp.join(self.work_dir, '*.pth')))

    def describe(self):
        return 'rc={} after {:.1f}s\n{}'.format(self.returncode, self.elapsed, self.output[-6000:])


def job_env(extra=None):
    env = dict(os.environ)
    for key in ENV_VARS:
        env.pop(key, None)
    env['PYTHONPATH'] = ROOT + (os.pathsep + env['PYTHONPATH'] if env.get('PYTHONPATH') else '')
    env['PYTHON'] = sys.executable
    env['PYTHONUNBUFFERED'] = '1'
    env.update(extra or {})
    return env


def run(cmd, work_dir, env=None):
    start = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=job_env(env), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=HARD_LIMIT_S)
    return Job(proc.returncode, proc.stdout.decode('utf-8', 'replace'), time.time() - start, work_dir)


def dist_train(work_dir, nproc, *flags, config=TOY, env=None):
    """``tools/dist_train.sh CONFIG NPROC --work-dir WORK_DIR FLAGS``."""
    cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), config, str(nproc), '--work-dir',
           str(work_dir)] + list(flags)
    return run(cmd, str(work_dir), env)


def torchrun_script(script, work_dir, nproc, *flags, config=TOY, env=None):
    """Launch any train script the way its own dist_train.sh would, through torch.distributed.run."""
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node={}'.format(nproc),
           '--master_port={}'.format(port), '--monitor_interval=1', script, config, '--launcher', 'pytorch', '--work-dir',
           str(work_dir)] + list(flags)
    return run(cmd, str(work_dir), env)


def metrics(record):
    return {k: v for k, v in record.items() if k.startswith('toy/')}
