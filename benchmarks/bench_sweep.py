"""The checkpoint sweep against one eval-only launch per checkpoint, on the main demo (the EchoFusion-shaped
project, a real mmdet3d PointPillars, gloo on CPU), both launched with tools/dist_train.sh from the project's
directory.

    python benchmarks/bench_sweep.py [--gpus 2] [--checkpoints DIR] [--frames 100] [--train-frames 80]

Without ``--checkpoints`` it copies the project and generates the demo data into a temporary directory and
trains five checkpoints there first (5 epochs, ``--no-validate``; not timed). Then it times one sweep launch
of the five (``--eval-only --checkpoints DIR/epoch_*.pth``) and five eval-only launches (``--cfg-options
load_from=...``), checks that each checkpoint's logged metrics are the same both ways, and prints the ratio.
"""
import argparse
import glob
import json
import os
import os.path as osp
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
PROJECT = osp.join(ROOT, 'examples', 'echofusion_project')
CONFIG = 'projects/configs/kradar/pointpillars_kradar_radar.py'
SWITCHES = ('KRADAR_EVAL_ONLY', 'KRADAR_EVAL_FIRST', 'KRADAR_EVAL_SAMPLES', 'KRADAR_EVAL_CHECKPOINTS',
            'KRADAR_EVAL_WATCH')


def launch(project, work_dir, gpus, *flags):
    """(seconds, return code, output) of ``tools/dist_train.sh CONFIG GPUS --work-dir W FLAGS``."""
    cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), CONFIG, str(gpus), '--work-dir', work_dir,
           '--no-doctor'] + list(flags)
    env = dict(os.environ, PYTHON=sys.executable, PYTHONUNBUFFERED='1')
    for key in SWITCHES:
        env.pop(key, None)
    start = time.time()
    proc = subprocess.run(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return time.time() - start, proc.returncode, proc.stdout.decode('utf-8', 'replace')


def val_metrics(work_dir):
    """The metrics of every ``"mode": "val"`` line of the run's JSON log, in order."""
    out = []
    for path in sorted(glob.glob(osp.join(work_dir, '*.log.json'))):
        with open(path) as f:
            for line in f:
                record = json.loads(line) if line.strip() else {}
                if record.get('mode') == 'val':
                    out.append(dict((k, v) for k, v in record.items() if k.startswith('pts_bbox/')))
    return out


def check(rc, output, what):
    if rc != 0:
        sys.stderr.write(output[-6000:])
        raise SystemExit('{} failed (rc={})'.format(what, rc))


def prepare(tmp, args):
    project = osp.join(tmp, 'project')
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns('data', 'work_dirs', 'tools', '__pycache__'))
    subprocess.check_call([sys.executable, osp.join(ROOT, 'tools', 'create_demo_data.py'), '--out',
                           osp.join(project, 'data', 'kradar'), '--frames', str(args.frames), '--train-frames',
                           str(args.train_frames)], stdout=subprocess.DEVNULL)
    if args.checkpoints:
        return project, osp.abspath(args.checkpoints)
    train = osp.join(project, 'work_dirs', 'train')
    seconds, rc, output = launch(project, train, args.gpus, '--no-validate', '--cfg-options',
                                 'runner.max_epochs=5', 'total_epochs=5', 'lr_config.step=[4]')
    check(rc, output, 'training the five checkpoints')
    print('trained 5 checkpoints in {:.1f} s (not timed below)'.format(seconds))
    return project, train


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--gpus', type=int, default=2, help='processes (gloo on CPU without GPUs)')
    parser.add_argument('--checkpoints', help='a directory with epoch_*.pth of the demo (default: train 5)')
    parser.add_argument('--frames', type=int, default=100, help='validation frames of the demo')
    parser.add_argument('--train-frames', type=int, default=80, help='training frames (only to make checkpoints)')
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix='bench_sweep_')
    try:
        project, ckpt_dir = prepare(tmp, args)
        ckpts = sorted(glob.glob(osp.join(ckpt_dir, 'epoch_*.pth')),
                       key=lambda p: int(osp.basename(p)[len('epoch_'):-len('.pth')]))[:5]
        sweep_dir = osp.join(tmp, 'sweep')
        sweep_s, rc, output = launch(project, sweep_dir, args.gpus, '--eval-only', '--checkpoints', *ckpts)
        check(rc, output, 'the sweep')
        print('sweep of {} checkpoints, one launch:   {:6.1f} s'.format(len(ckpts), sweep_s))
        single_s, singles = [], []
        for path in ckpts:
            work = osp.join(tmp, 'single_' + osp.basename(path)[:-4])
            seconds, rc, output = launch(project, work, args.gpus, '--eval-only', '--cfg-options',
                                         'load_from=' + path)
            check(rc, output, 'eval-only of ' + path)
            single_s.append(seconds)
            singles.extend(val_metrics(work))
            print('  eval-only launch of {:<12s}       {:6.1f} s'.format(osp.basename(path), seconds))
        swept = val_metrics(sweep_dir)
        same = swept == singles
        print('{} separate eval-only launches:    {:6.1f} s'.format(len(ckpts), sum(single_s)))
        print('the sweep is {:.2f}x faster ({} processes; metrics identical per checkpoint: {})'.format(
            sum(single_s) / sweep_s, args.gpus, same))
        if not same:
            raise SystemExit('the sweep logged other metrics than the separate launches')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
