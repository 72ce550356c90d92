"""The partial inference record (issue 30) on the EchoFusion-shaped project (examples/echofusion_project),
eval-only through our tools/dist_train.sh (torchrun, gloo on CPU without GPUs), ratios in one run:

- overhead: inference time with the record (the default) / without it (``runner.eval_record_every=0``),
  goal <= 1.02;
- resume: a run whose rank 1 is SIGKILLed at about 80% of inference, relaunched: the relaunch's inference time
  / an uninterrupted run's, goal <= 0.3.

    .venv/bin/python benchmarks/bench_eval_records.py [--frames 600] [--gpus 2] [--repeat 2] [--kill-at 0.8]

Inference time is read from each run's own log, start-up excluded: from the start of rank 0's inference
session (its ``inferred ... in X s`` line minus X) to rank 0's ``predictions saved`` line (after the
collection, so it waits for the slowest rank).
"""
import argparse
import datetime
import os
import os.path as osp
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
PROJECT = osp.join(ROOT, 'examples', 'echofusion_project')
CONFIG = 'projects/configs/kradar/pointpillars_kradar_radar.py'
STAMP = r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})'
INFERRED = re.compile(STAMP + r' - \S+ - INFO - kradar_plugin: rank 0 inferred (\d+) samples.*? in ([\d.]+) s')
SAVED = re.compile(STAMP + r' - \S+ - INFO - \d+ predictions saved to ')
PROGRESS = re.compile(r'(\d+)/(\d+), [\d.]+ task/s')
WRITING = re.compile(r'writing the record took ([\d.]+) s \(([\d.]+)%\)')


def stamp(text):
    return datetime.datetime.strptime(text, '%Y-%m-%d %H:%M:%S,%f')


def inference_seconds(log):
    """(seconds of inference, samples rank 0 inferred) from a run's output."""
    inferred, saved = INFERRED.search(log), SAVED.search(log)
    if not (inferred and saved):
        raise RuntimeError('no inference timing in the output:\n' + log[-3000:])
    start = stamp(inferred.group(1)) - datetime.timedelta(seconds=float(inferred.group(3)))
    return (stamp(saved.group(1)) - start).total_seconds(), int(inferred.group(2))


def descendants(pid):
    children = {}
    for name in os.listdir('/proc'):
        if name.isdigit():
            try:
                with open('/proc/{}/stat'.format(name)) as f:
                    ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            except (IOError, OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def rank_of(pid):
    try:
        with open('/proc/{}/environ'.format(pid), 'rb') as f:
            env = dict(x.split(b'=', 1) for x in f.read().split(b'\0') if b'=' in x)
    except (IOError, OSError):
        return None
    return int(env[b'RANK']) if b'RANK' in env and b'LOCAL_RANK' in env else None


def launch(project, work_dir, gpus, options, kill_at=None):
    """Run eval-only to its end (or SIGKILL rank 1 once the progress bar passes ``kill_at``); returns
    (return code, output)."""
    cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), CONFIG, str(gpus), '--work-dir', work_dir,
           '--eval-only', '--no-doctor', '--cfg-options', 'model.test_cfg.pts.score_thr=0.0'] + list(options)
    env = dict(os.environ, PYTHON=sys.executable, PYTHONUNBUFFERED='1')
    for key in [k for k in env if k.startswith('KRADAR_EVAL')]:
        env.pop(key)
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, killed = [], False
    while True:
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        out.append(chunk.decode('utf-8', 'replace'))
        if kill_at is not None and not killed:
            done = PROGRESS.findall(out[-1])
            if done and int(done[-1][0]) >= kill_at * int(done[-1][1]):
                for pid in descendants(proc.pid):
                    if rank_of(pid) == 1:
                        os.kill(pid, signal.SIGKILL)
                        killed = True
    proc.wait()
    if kill_at is not None and not killed:
        raise RuntimeError('the run ended before rank 1 could be killed')
    return proc.returncode, ''.join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--frames', type=int, default=600, help='validation frames of the generated demo data')
    parser.add_argument('--gpus', type=int, default=2, help='processes (gloo on CPU without GPUs)')
    parser.add_argument('--repeat', type=int, default=2, help='pairs of runs with and without the record')
    parser.add_argument('--kill-at', type=float, default=0.8, help='fraction of inference when rank 1 is killed')
    parser.add_argument('--record-every', type=int, default=None,
                        help='runner.eval_record_every (default: the defaults, 256 samples or 20 s)')
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix='bench_eval_records_')
    try:
        project = osp.join(tmp, 'project')
        shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns('data', 'work_dirs', '__pycache__'))
        started = time.time()
        subprocess.check_call([sys.executable, osp.join(ROOT, 'tools', 'create_demo_data.py'), '--out',
                               osp.join(project, 'data', 'kradar'), '--frames', str(args.frames),
                               '--train-frames', '8'], cwd=ROOT, stdout=subprocess.DEVNULL)
        print('demo data: {} validation frames in {:.0f} s; {} processes; load average {}'.format(
            args.frames, time.time() - started, args.gpus, ', '.join('{:.1f}'.format(v) for v in os.getloadavg())))
        every = [] if args.record_every is None else ['runner.eval_record_every={}'.format(args.record_every)]
        times = {'record': [], 'none': []}
        for rep in range(args.repeat):
            for mode in (('record', 'none') if rep % 2 == 0 else ('none', 'record')):
                options = every if mode == 'record' else ['runner.eval_record_every=0']
                rc, log = launch(project, osp.join(tmp, 'w_{}_{}'.format(mode, rep)), args.gpus, options)
                if rc != 0:
                    sys.stderr.write(log[-3000:])
                    raise SystemExit('the {} run failed ({})'.format(mode, rc))
                seconds, _ = inference_seconds(log)
                times[mode].append(seconds)
                writing = WRITING.search(log)
                print('{:>6} run {}: inference {:.2f} s{}'.format(mode, rep + 1, seconds, (
                    '; rank 0 spent {} s ({}%) writing the record'.format(*writing.groups()) if writing else '')))
        record, none = sum(times['record']) / len(times['record']), sum(times['none']) / len(times['none'])
        print('overhead: with the record / without it = {:.3f} (goal <= 1.02); means {:.2f} s / {:.2f} s'.format(
            record / none, record, none))
        work = osp.join(tmp, 'w_killed')
        rc, log = launch(project, work, args.gpus, every, kill_at=args.kill_at)
        if rc == 0:
            raise SystemExit('the killed run exited 0')
        rc, log = launch(project, work, args.gpus, every)
        if rc != 0 or 'resuming from the partial record' not in log:
            sys.stderr.write(log[-3000:])
            raise SystemExit('the relaunch did not resume ({})'.format(rc))
        seconds, inferred = inference_seconds(log)
        print('resume after rank 1 was SIGKILLed at {:.0%}: inference {:.2f} s (rank 0 inferred {} samples); '
              '/ uninterrupted {:.2f} s = {:.3f} (goal <= 0.3)'.format(args.kill_at, seconds, inferred, record,
                                                                      seconds / record))
        print('load average after: {}'.format(', '.join('{:.1f}'.format(v) for v in os.getloadavg())))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
