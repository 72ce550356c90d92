"""Demo data, configs and real launches (mmdet3d 1.4's own tools/train.py, torchrun, gloo on CPU) for the
OpenMMLab 2.0 tests, and readers of what the jobs wrote."""
import glob
import importlib.util
import json
import os
import os.path as osp
import pickle
import sys

from tests import launching
from tests.launching import free_port  # noqa: F401

ROOT = launching.ROOT
DEMO_CONFIG = osp.join(ROOT, 'configs', 'mm2', 'pointpillars_kradar_radar.py')
TOY_CONFIG = osp.join(ROOT, 'tests', 'adapters', 'mmengine', 'toy_config.py')


def mmdet3d_train_script():
    """mmdet3d's own, unmodified tools/train.py, as its wheel ships it (mmdet3d/.mim/tools/train.py)."""
    spec = importlib.util.find_spec('mmdet3d')
    path = osp.join(list(spec.submodule_search_locations)[0], '.mim', 'tools', 'train.py')
    assert osp.isfile(path), path
    return path


def demo_data(out_dir, frames=16, train_frames=8):
    path = osp.join(ROOT, 'kradar_plugin', 'demo', 'data.py')
    spec = importlib.util.spec_from_file_location('kradar_demo_data_mm2', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate_demo_dataset(str(out_dir), frames=frames, train_frames=train_frames, seed=0)
    return str(out_dir)


def write_config(path, data_root, extra=''):
    """A config that inherits the demo config with ``data_root`` set; ``extra`` is appended verbatim."""
    data_root = osp.join(str(data_root), '')
    text = (
        "_base_ = [{base!r}]\n"
        "data_root = {root!r}\n"
        "train_dataloader = dict(dataset=dict(data_root=data_root))\n"
        "val_dataloader = dict(batch_size=1, dataset=dict(data_root=data_root))\n"
        "test_dataloader = val_dataloader\n"
        "val_evaluator = dict(ann_file=data_root + 'kradar_infos_val.pkl')\n"
        "test_evaluator = val_evaluator\n"
        # a randomly initialised detector scores ~0.01: keep its boxes so that there is something to compare
        "model = dict(test_cfg=dict(score_thr=0.0, max_num=10))\n"
        "default_hooks = dict(logger=dict(interval=1))\n"
        "train_cfg = dict(max_epochs=1)\n"
    ).format(base=DEMO_CONFIG, root=data_root) + extra
    with open(str(path), 'w') as f:
        f.write(text)
    return str(path)


class Job(launching.Job):
    """A finished mmengine job and what it wrote (scalars, checkpoints, the guard's pickle)."""

    def records(self):
        """The scalar records of the run (``<work_dir>/<timestamp>/vis_data/scalars.json``)."""
        out = []
        for path in sorted(glob.glob(osp.join(self.work_dir, '*', 'vis_data', 'scalars.json'))):
            with open(path) as f:
                out.extend(json.loads(line) for line in f if line.strip())
        return out

    def val_records(self, prefix='pts_bbox/'):
        return [r for r in self.records() if any(k.startswith(prefix) for k in r)]

    def train_records(self):
        return [r for r in self.records() if 'loss' in r]

    @staticmethod
    def metrics(record, prefix='pts_bbox/'):
        return {k: v for k, v in record.items() if k.startswith(prefix)}

    def checkpoints(self):
        return sorted(osp.basename(p) for p in glob.glob(osp.join(self.work_dir, '**', '*.pth'), recursive=True))

    def collected(self, tag='epoch_0'):
        """The results the guard pickled before the metric ran (rank 0, collected order)."""
        with open(osp.join(self.work_dir, 'eval_results', 'results_{}.pkl'.format(tag)), 'rb') as f:
            return pickle.load(f)


def job_env(extra=None):
    """``launching.job_env`` with one OpenMP thread per process (mmengine's default would warn)."""
    env = {'OMP_NUM_THREADS': '1'}
    env.update(extra or {})
    return launching.job_env(env)


def launch(config, work_dir, nproc=1, args=(), env=None, script=None, module=None, cwd=None):
    """Run ``script`` (default: mmdet3d's tools/train.py) or ``-m module`` on ``config``: one plain process
    for ``nproc=1``, else through torchrun (``--launcher pytorch``) as mmdet3d's dist_train.sh does."""
    target = ['-m', module] if module else [script or mmdet3d_train_script()]
    if nproc == 1:
        cmd = [sys.executable] + target + [config, '--work-dir', str(work_dir)]
    else:
        cmd = launching.torchrun_cmd(nproc, ['--module', module] if module else target, config, '--launcher',
                                     'pytorch', '--work-dir', work_dir)
    cmd += list(args)
    cwd = str(cwd or osp.dirname(osp.abspath(str(work_dir))))  # mmengine's collection tmpdir goes here
    os.makedirs(cwd, exist_ok=True)
    return launching.run(cmd, work_dir, cwd=cwd, env=dict({'OMP_NUM_THREADS': '1'}, **(env or {})), job_class=Job)
