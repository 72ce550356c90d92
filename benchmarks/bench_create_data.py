"""``kradar-create-data`` against K-Radar's own loader on the same generated v1.0 tree.

The tree holds every frame of K-Radar's split lists (``resources/split/{train,test}.txt`` from the K-Radar
snapshot, 17,457 + 17,535 lines; without a snapshot 58 sequences of made-up frames of the same count), each a
v1.0 label file with 0-8 objects (some ``#`` lines, CRLF in every third sequence), plus calibration and
description files. Timed, side by side in this process (best of ``--repeat``):

* K-Radar: its own ``get_label`` (label, calibration) and ``get_description`` per frame, as its dataset
  does them (``datasets/kradar_detection_v2_0.py``, read from the snapshot and run with numpy alone);
* ours: the infos of both splits (``files.create_data.convert_split``), and the whole command
  (``kradar-create-data``: parse, convert, pickle both splits) in a fresh process.

    python benchmarks/bench_create_data.py [--tree DIR] [--repeat 3]
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


def write_tree(root, splits):
    marker = os.path.join(root, 'bench_tree.done')
    if os.path.exists(marker):
        return
    rs = np.random.RandomState(1)
    header = '* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)={}_{}_00001_00001_00001, timestamp=1600000000.0'
    seqs = set()
    for lines in splits.values():
        for line in lines:
            seq, label = line.split(',')
            if seq not in seqs:
                seqs.add(seq)
                for d in ('info_label', 'info_calib'):
                    os.makedirs(os.path.join(root, seq, d), exist_ok=True)
                with open(os.path.join(root, seq, 'info_calib', 'calib_radar_lidar.txt'), 'w') as f:
                    f.write('frame difference,x,y\n32,-2.54,0.3')
                with open(os.path.join(root, seq, 'description.txt'), 'w') as f:
                    f.write('urban,day,normal')
            rdr, ldr = label[:-4].split('_')
            rows = [header.format(rdr, ldr)]
            for k in range(rs.randint(0, 9)):
                rows.append('{}, {}, {}, Sedan, {:.4f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}'.format(
                    '#' if rs.rand() < 0.05 else '*', k, k - 1, *rs.uniform(-10, 60, 7)))
            newline = '\r\n' if int(seq) % 3 == 0 else '\n'
            with open(os.path.join(root, seq, 'info_label', label), 'w', newline='') as f:
                f.write(newline.join(rows) + newline)
    with open(marker, 'w') as f:
        f.write('done')


def kradar_loader_pass(root, splits):
    loader = snap.kradar_loader('v1_0')
    n = 0
    for lines in splits.values():
        for line in lines:
            seq, label = line.split(',')
            item = snap.kradar_item(root, seq, {'v1_0': os.path.join(root, seq, 'info_label', label)})
            item = loader.get_description(loader.get_label(item))
            n += item['meta']['num_obj']
    return n


def our_pass(root, split_dir):
    from kradar_plugin.files.create_data import convert_split
    from kradar_plugin.files.tree import KRadarTree
    tree = KRadarTree(root)
    return sum(len(i['annos']['rotation_y']) for s in ('train', 'test')
               for i in convert_split(tree, os.path.join(split_dir, s + '.txt')))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--tree', default=os.path.join(ROOT, 'work_dirs', 'bench_kradar_tree'))
    p.add_argument('--repeat', type=int, default=3)
    args = p.parse_args()
    repo = snap.kradar_repo()
    splits = split_lines(repo)
    t0 = time.perf_counter()
    write_tree(args.tree, splits)
    split_dir = os.path.join(args.tree, 'split')
    os.makedirs(split_dir, exist_ok=True)
    for name, lines in splits.items():
        with open(os.path.join(split_dir, name + '.txt'), 'w') as f:
            f.write('\n'.join(lines))
    n_files = sum(len(v) for v in splits.values())
    print('tree: {} label files ({} split lists), ready in {:.1f} s'.format(
        n_files, 'K-Radar\'s' if repo else 'made-up', time.perf_counter() - t0))
    ours, n_ours = best(lambda: our_pass(args.tree, split_dir), args.repeat)
    if repo is not None:
        theirs, n_theirs = best(lambda: kradar_loader_pass(args.tree, splits), args.repeat)
        assert n_ours == n_theirs, (n_ours, n_theirs)
        print('K-Radar get_label + get_description: {:.2f} s   ours (infos of both splits): {:.2f} s   '
              'ratio K-Radar / ours = {:.2f}x'.format(theirs, ours, theirs / ours))
    else:
        print('ours (infos of both splits): {:.2f} s (no K-Radar snapshot: no side-by-side)'.format(ours))
    out = os.path.join(args.tree, 'infos')
    env = dict(os.environ, PYTHONPATH=ROOT)
    t0 = time.perf_counter()
    subprocess.check_call([sys.executable, '-m', 'kradar_cli', 'create-data', '--root-path', args.tree, '--out-dir',
                           out, '--split-dir', split_dir, '--no-progress'], env=env, stdout=subprocess.DEVNULL)
    print('kradar-create-data end to end (fresh process, both splits pickled): {:.2f} s (limit 10 s)'.format(
        time.perf_counter() - t0))


if __name__ == '__main__':
    main()
