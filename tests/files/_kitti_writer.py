"""Writes K-Radar prediction folders as its pipeline does (``validate_kitti`` and
``validate_kitti_conditional`` with ``dict_datum_to_kitti``), from frames of radar-frame objects: written
here from the format description (K-Radar's pipeline needs torch and a trained network to run), checked
against K-Radar's own parser in the tests."""
import os

import numpy as np

KEYWORDS = {'Sedan': 'sed', 'Bus or Truck': 'bus', 'Motorcycle': 'mot', 'Bicycle': 'bic',
            'Bicycle Group': 'big', 'Pedestrian': 'ped', 'Pedestrian Group': 'peg'}
DUMMY = 'dummy -1 -1 0 0 0 0 0 0 0 0 0 0 0 0 0'


def random_frames(n, seed=0, classes=('Sedan', 'Bus or Truck')):
    """``n`` frames: GT boxes (name, x, y, z, l, w, h, yaw) in the radar frame, noisy predictions (name, score,
    box as float32 like a network's), the frame's (road, time, weather); some frames without GT."""
    rs = np.random.RandomState(seed)
    weathers, roads, times = ('normal', 'fog', 'rain', 'sleet'), ('urban', 'highway'), ('day', 'night')
    frames = []
    for i in range(n):
        gts = []
        for _ in range(0 if i % 11 == 5 else rs.randint(1, 5)):
            name = classes[int(rs.rand() < 0.3)] if len(classes) > 1 else classes[0]
            size = (4.5, 1.9, 1.6) if name == 'Sedan' else (10.0, 2.5, 3.2)
            gts.append((name, rs.uniform(5, 70), rs.uniform(-6, 6), rs.uniform(-0.5, 1.0)) + tuple(
                s * rs.uniform(0.9, 1.1) for s in size) + (rs.uniform(-3.1, 3.1),))
        preds = []
        for g in gts:
            if rs.rand() < 0.8:
                box = np.array(g[1:], dtype=np.float64) + rs.normal(0, 0.3, 7) * [1, 1, 0.2, 0.05, 0.05, 0.05, 0.1]
                preds.append((g[0], np.float32(rs.uniform(0.1, 1.0))) + tuple(np.float32(v) for v in box))
        for _ in range(rs.randint(0, 3)):
            preds.append((classes[0], np.float32(rs.uniform(0.05, 0.9))) + tuple(np.float32(v) for v in (
                rs.uniform(5, 70), rs.uniform(-6, 6), 0.2, 4.4, 1.8, 1.5, rs.uniform(-3, 3))))
        cond = (roads[i % 2], times[int(i >= n // 2)], weathers[(i // 6) % len(weathers)])
        frames.append({'gt': gts, 'pred': preds, 'desc': cond, 'sequence': str(i // 6)})
    return frames


def gt_line(obj):
    name, x, y, z, l, w, h, yaw = obj
    xc, yc, zc, rz, xl, yl, zl = (np.round(v, 2) for v in (x, y, z, yaw, l, w, h))
    return '{} 0.00 0 0 50 50 150 150 {} {} {} {} {} {} {}'.format(KEYWORDS[name], zl, yl, xl, yc, zc, xc, rz)


def pred_line(pred):
    name, score, x, y, z, l, w, h, yaw = pred
    return '{} -1 -1 0 50 50 150 150 {} {} {} {} {} {} {} {}'.format(KEYWORDS[name], h, w, l, y, z, x, yaw, score)


def _append(path, text):
    with open(path, 'a') as f:
        f.write(text)


def write_folders(out_dir, frames, conf=0.3, conditional=False):
    """The ``<conf>`` folder K-Radar writes for these frames; returns its path."""
    conf_dir = os.path.join(out_dir, str(conf))
    for i, frame in enumerate(frames):
        if not frame['gt']:          # frames without GT are not written
            continue
        road, time, weather = frame['desc']
        groups = ['all', road, time, weather] if conditional else ['']
        names = ('preds', 'gts', 'desc') if conditional else ('pred', 'gt', 'desc')
        kept = [p for p in frame['pred'] if p[1] > conf]
        idx = str(i).zfill(6)
        for group in groups:
            base = os.path.join(conf_dir, group)
            for n in names:
                os.makedirs(os.path.join(base, n), exist_ok=True)
            with open(os.path.join(base, names[1], idx + '.txt'), 'w') as f:
                f.write(''.join(gt_line(g) + '\n' for g in frame['gt']))
            with open(os.path.join(base, 'desc', idx + '.txt'), 'w') as f:
                f.write('{}\n{}\n{}'.format(time, road, weather))
            with open(os.path.join(base, names[0], idx + '.txt'), 'w') as f:
                f.write(''.join(pred_line(p) + '\n' for p in kept) if kept else DUMMY + '\n')
            _append(os.path.join(base, 'val.txt'), idx + '\n')
    return conf_dir
