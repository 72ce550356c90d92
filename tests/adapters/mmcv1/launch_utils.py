"""Launch real training jobs (torchrun, gloo, CPU) for the mmcv 1.x runner tests and read what they logged
(through the suite's one launch helper, ``tests.launching``)."""
import glob
import json
import os.path as osp

from tests import launching
from tests.launching import HARD_LIMIT_S, job_env  # noqa: F401  (used by the project tests)

ROOT = launching.ROOT
CONFIGS = osp.join(ROOT, 'tests', 'adapters', 'mmcv1', 'configs')
TOY = osp.join(CONFIGS, 'toy.py')
TOY_COLLECTIVE_TIMEOUT_S = 120  # dist_params.timeout of configs/toy.py


class Job(launching.Job):
    """A finished mmcv 1.x job and the records its logger wrote (``<work_dir>/*.log.json``)."""

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
        return super(Job, self).describe(6000)


def run(cmd, work_dir, env=None):
    return launching.run(cmd, work_dir, env=env, job_class=Job)


def dist_train(work_dir, nproc, *flags, config=TOY, env=None):
    """``tools/dist_train.sh CONFIG NPROC --work-dir WORK_DIR FLAGS``."""
    cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), config, str(nproc), '--work-dir',
           str(work_dir)] + list(flags)
    return run(cmd, str(work_dir), env)


def torchrun_script(script, work_dir, nproc, *flags, config=TOY, env=None):
    """Launch any train script the way its own dist_train.sh would, through torch.distributed.run."""
    cmd = launching.torchrun_cmd(nproc, script, config, '--launcher', 'pytorch', '--work-dir', work_dir, *flags)
    return run(cmd, str(work_dir), env)


def metrics(record):
    return {k: v for k, v in record.items() if k.startswith('toy/')}
