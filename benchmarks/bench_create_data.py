"""``kradar-create-data`` (and its ``--audit``) against K-Radar's own loader on the same label files.

Trees (each every frame of K-Radar's split lists ``resources/split/{train,test}.txt`` from the K-Radar snapshot,
17,458 + 17,536 lines; without a snapshot 58 sequences of made-up frames of the same count), with calibration
and description files:

* ``--version v1.0`` (default): generated v1.0 label files (0-8 objects, some ``#`` lines, CRLF in every third
  sequence) in ``<seq>/info_label``;
* ``--version v2.0`` / ``v2.1``: generated revised labels in K-Radar's archive layout, with the real releases'
  quirks at their measured rates (glued headers in v2.0; LL/LR/l visibility, group classes, yaw outside
  +-180 degrees, header-only frames, no final newline and trailing spaces in v2.1);
* ``--labels DIR --version V``: a user-supplied folder of real labels of version V (``<seq>/<file>.txt``, e.g.
  ``KRadar_revised_visibility`` of the v2.1 release), with made-up calibration and descriptions beside them.

Timed side by side in this run (best of ``--repeat``): K-Radar's own ``get_label`` (label and calibration) and
``get_description`` per frame, as its dataset calls them (``datasets/kradar_detection_v2_0.py``, read from the
snapshot and run with numpy alone), against the whole ``kradar-create-data`` command in a fresh process
(start-up, parsing, conversion and pickling of both splits) and the whole ``--audit`` command.

    python benchmarks/bench_create_data.py [--tree DIR] [--version v2.1] [--labels DIR] [--repeat 3]
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.files import _snapshots as snap  # noqa: E402


def split_lines(repo):
    if repo is not None:
        out = {}
        for split in ('train', 'test'):
            text = snap._source(repo, 'resources/split/{}.txt'.format(split))
            out[split] = [line.strip() for line in text.splitlines() if line.strip()]
        return out
    rs = np.random.RandomState(0)
    lines = []
    for seq in range(1, 59):
        start = rs.randint(0, 50)
        lines += ['{},{:05d}_{:05d}.txt'.format(seq, start + k, start + k + 3) for k in range(603)]
    return {'train': lines[::2][:17457], 'test': lines[1::2][:17535]}


HEADER = '* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)={}_{}_00001_00001_00001, timestamp=1600000000.0'
CLASSES = ['Sedan'] * 15 + ['Bus or Truck'] * 3 + ['Pedestrian', 'Bicycle', 'Motorcycle']


def _object_line(version, rs, k, avail):
    x = rs.uniform(-10, 60, 7)
    if version == 'v2.1' and rs.rand() < 0.03:         # 3,218 of 115,229 real v2.1 yaws are outside +-180
        x[3] = rs.uniform(-330, 457)
    name = CLASSES[rs.randint(len(CLASSES))] if rs.rand() > 0.002 else 'Pedestrian Group'
    geo = '{:.4f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}'.format(*x)
    if version == 'v1.0':
        return '{}, {}, {}, {}, {}'.format('#' if rs.rand() < 0.05 else '*', k, k - 1, name, geo)
    if version == 'v2.0':
        return '*, {}, {}, {}'.format(k, name, geo)
    return '*, {}, {}, {}, {}'.format(avail, k, name, geo)


def write_tree(root, splits, version='v1.0', labels=None):
    """The tree of ``splits``: calibration and descriptions, and generated labels of ``version`` unless
    ``labels`` (a user's folder of real labels) is given."""
    marker = os.path.join(root, 'bench_tree_{}{}.done'.format(version, '_user' if labels else ''))
    if os.path.exists(marker):
        return
    rs = np.random.RandomState(1)
    label_root = _label_root(root, version)
    seqs = set()
    for lines in splits.values():
        for line in lines:
            seq, label = line.split(',')
            if seq not in seqs:
                seqs.add(seq)
                for d in ('info_label', 'info_calib'):
                    os.makedirs(os.path.join(root, seq, d), exist_ok=True)
                if label_root and not labels:
                    os.makedirs(os.path.join(label_root, seq), exist_ok=True)
                with open(os.path.join(root, seq, 'info_calib', 'calib_radar_lidar.txt'), 'w') as f:
                    f.write('frame difference,x,y\n32,-2.54,0.3')
                with open(os.path.join(root, seq, 'description.txt'), 'w') as f:
                    f.write('urban,day,normal')
            if labels:
                continue
            rdr, ldr = label[:-4].split('_')
            n = rs.randint(0, 9) if version != 'v2.1' or rs.rand() > 0.12 else 0   # 4,307 header-only in v2.1
            avail = ['R', 'R', 'R', 'L1', 'L'] if rs.rand() > 0.0001 else ['LR']
            rows = [HEADER.format(rdr, ldr)] + [_object_line(version, rs, k, avail[rs.randint(len(avail))])
                                                for k in range(n)]
            if version == 'v2.0' and n and rs.rand() < 0.017:          # 597 glued headers in 34,994 files
                rows[0:2] = [rows[0] + rows[1]]
            newline = '\r\n' if version == 'v1.0' and int(seq) % 3 == 0 else '\n'
            end = '' if version == 'v2.1' and rs.rand() < 0.12 else newline
            folder = os.path.join(label_root, seq) if label_root else os.path.join(root, seq, 'info_label')
            with open(os.path.join(folder, label), 'w', newline='') as f:
                f.write(newline.join(rows) + end)
    with open(marker, 'w') as f:
        f.write('done')


REVISED = {'v2.0': ('kradar_revised_label_v2_0', 'KRadar_refined_label_by_UWIPL'),
           'v2.1': ('kradar_revised_label_v2_1', 'KRadar_revised_visibility')}


def _label_root(root, version):
    if version == 'v1.0':
        return None
    return os.path.join(root, 'revised', *REVISED[version])


def kradar_loader_pass(root, splits, version, label_dir):
    """K-Radar's get_label (label + calibration) and get_description for every frame; objects counted."""
    key = version.replace('.', '_')
    loader = snap.kradar_loader(key)
    n = 0
    for lines in splits.values():
        for line in lines:
            seq, label = line.split(',')
            path = os.path.join(label_dir(seq), label)
            item = snap.kradar_item(root, seq, {key: path})
            item = loader.get_description(loader.get_label(item))
            n += item['meta']['num_obj']
    return n


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def command(args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, '-m', 'kradar_cli', 'create-data'] + args, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--tree', default=os.path.join(ROOT, 'work_dirs', 'bench_kradar_tree'))
    p.add_argument('--version', default='v1.0', choices=['v1.0', 'v2.0', 'v2.1'])
    p.add_argument('--labels', help="a folder of real K-Radar labels of --version (<seq>/<rdr>_<ldr64>.txt)")
    p.add_argument('--repeat', type=int, default=3)
    args = p.parse_args()
    repo = snap.kradar_repo()
    splits = split_lines(repo)
    if args.labels:
        have = set()
        for seq in os.listdir(args.labels):
            if seq.isdigit():
                have.update('{},{}'.format(int(seq), n) for n in os.listdir(os.path.join(args.labels, seq)))
        splits = dict((k, [line for line in v if line in have]) for k, v in splits.items())
    tree = args.tree + ('_' + args.version if args.version != 'v1.0' else '') + ('_user' if args.labels else '')
    t0 = time.perf_counter()
    write_tree(tree, splits, args.version, args.labels)
    split_dir = os.path.join(tree, 'split')
    os.makedirs(split_dir, exist_ok=True)
    for name, lines in splits.items():
        with open(os.path.join(split_dir, name + '.txt'), 'w') as f:
            f.write('\n'.join(lines))
    n_files = sum(len(v) for v in splits.values())
    labels_dir = args.labels or _label_root(tree, args.version)
    print('tree: {} {} label files ({}, {} split lists), ready in {:.1f} s'.format(
        n_files, args.version, 'the user\'s folder ' + args.labels if args.labels else 'generated',
        'K-Radar\'s' if repo else 'made-up', time.perf_counter() - t0))
    label_dir = (lambda seq: os.path.join(labels_dir, seq)) if labels_dir else \
        (lambda seq: os.path.join(tree, seq, 'info_label'))
    base = ['--root-path', tree, '--split-dir', split_dir, '--label-version', args.version, '--no-progress']
    if labels_dir:
        base += ['--labels-dir', labels_dir]
    out = os.path.join(tree, 'infos')
    ours, run = best(lambda: command(base + ['--out-dir', out]), args.repeat)
    assert run.returncode == 0, run.stderr
    audit, arun = best(lambda: command(base + ['--audit', '--json']), args.repeat)
    assert arun.returncode in (0, 2), arun.stderr
    n_ours = sum(int(line.split(' frames, ')[1].split()[0]) for line in run.stdout.splitlines() if ' frames, ' in line)
    print('kradar-create-data, whole command in a fresh process (start-up, parse, convert, pickle both splits): '
          '{:.2f} s; --audit, whole command: {:.2f} s (audit / conversion = {:.2f})'.format(ours, audit, audit / ours))
    summary = [line for line in run.stderr.splitlines() if ': note: ' in line or ': warning: ' in line]
    if summary:
        print('the converter\'s summary:\n  ' + '\n  '.join(summary))
    if repo is not None:
        theirs, n_theirs = best(lambda: kradar_loader_pass(tree, splits, args.version, label_dir), args.repeat)
        assert n_ours == n_theirs, (n_ours, n_theirs)
        print('K-Radar get_label + get_description (label, calibration, description per frame): {:.2f} s   '
              'ratio whole command / K-Radar = {:.2f} (goal <= 1)'.format(theirs, ours / theirs))
    else:
        print('no K-Radar snapshot: no side-by-side')


if __name__ == '__main__':
    main()
