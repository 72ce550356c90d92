"""Seconds from launch to the K-Radar AP table: ``--eval-only`` vs a normal run (one epoch, then the
evaluation), both launched the same way (tools/dist_train.sh, gloo on CPU without GPUs) on the demo.

    python benchmarks/bench_eval_only.py [--gpus 2] [--repeat 3] [--data DIR | --train-frames N]

Generates the demo data in a temporary directory unless ``--data`` is given. Prints one line per run and
the ratio normal / eval-only of the medians.
"""
import argparse
import os
import os.path as osp
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
CONFIG = osp.join(ROOT, 'configs', 'kradar', 'demo_eval_only.py')
TABLE = re.compile(r'^(bbox|bev|3d)\s+AP:')


def launch(work_dir, data_root, gpus, eval_only):
    """(seconds to the first AP line, seconds to exit, return code, last output lines)."""
    cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), CONFIG, str(gpus), '--work-dir', work_dir,
           '--no-doctor']
    if eval_only:
        cmd.append('--eval-only')
    cmd += ['--cfg-options'] + ['data.{}.data_root={}'.format(s, data_root) for s in ('train', 'val', 'test')]
    env = dict(os.environ, PYTHON=sys.executable, PYTHONUNBUFFERED='1')
    for key in ('KRADAR_EVAL_ONLY', 'KRADAR_EVAL_FIRST', 'KRADAR_EVAL_SAMPLES'):
        env.pop(key, None)
    start = time.time()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    to_table = None
    tail = []
    for raw in iter(proc.stdout.readline, b''):
        line = raw.decode('utf-8', 'replace')
        tail = (tail + [line])[-30:]
        if to_table is None and TABLE.match(line):
            to_table = time.time() - start
    proc.wait()
    return to_table, time.time() - start, proc.returncode, ''.join(tail)


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--gpus', type=int, default=2, help='processes (gloo on CPU without GPUs)')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--data', help='demo data directory (default: generate into a temp dir)')
    parser.add_argument('--train-frames', type=int, default=None,
                        help='training frames of the generated demo (default: the generator default, '
                             'half the 100 validation frames); a real K-Radar epoch is far longer')
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix='bench_eval_only_')
    try:
        data_root = args.data
        if data_root is None:
            data_root = osp.join(tmp, 'demo')
            cmd = [sys.executable, osp.join(ROOT, 'tools', 'create_demo_data.py'), '--out', data_root]
            if args.train_frames is not None:
                cmd += ['--train-frames', str(args.train_frames)]
            subprocess.check_call(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
        data_root = osp.abspath(data_root) + '/'
        times = {True: [], False: []}
        for rep in range(args.repeat):
            # alternate the order so that neither mode always pays the cold caches
            for eval_only in ((True, False) if rep % 2 == 0 else (False, True)):
                name = 'eval-only' if eval_only else 'train 1 epoch + eval'
                to_table, total, rc, tail = launch(osp.join(tmp, 'w{}_{}'.format(rep, int(eval_only))),
                                                   data_root, args.gpus, eval_only)
                if rc != 0 or to_table is None:
                    sys.stderr.write(tail)
                    raise SystemExit('{} run failed (rc={}, AP table seen: {})'.format(
                        name, rc, to_table is not None))
                times[eval_only].append(to_table)
                print('{:<22s} launch -> AP table {:6.1f} s   (process exit {:6.1f} s)'.format(
                    name, to_table, total))
        fast, slow = median(times[True]), median(times[False])
        print('eval-only reaches the AP table {:.1f}x sooner ({:.1f} s vs {:.1f} s, {} processes, '
              'median of {})'.format(slow / fast, fast, slow, args.gpus, args.repeat))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
