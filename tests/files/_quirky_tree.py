"""A small K-Radar tree that carries every quirk measured on the real label releases and split lists
(../shared/reference/kradar-files.md, "The real releases"), written from the format, never copied:

- v2.1: visibility values ``LL``, ``LR`` and ``l`` besides R/L/L1; the classes ``Pedestrian Group`` and
  ``Bicycle Group``; yaws outside +-180 degrees (down to -329.9, up to 457.4); header-only frames; files
  without a final newline; files with trailing spaces;
- v2.0: files whose first object is glued onto the header line (``...timestamp=<t>*, 1, Sedan, ...``);
- v1.0: CRLF endings, ``#`` (BEV-only) lines and a line of another field count ('* split err');
- split lists: K-Radar's own (no final newline); a fork's train.txt with test frames appended, whose first
  appended entry is glued onto the last original line; a fork's test.txt with ``# `` comments; condition
  splits; a list with a frame twice.

``QUIRKS`` holds what the tree was built with, so the tests derive their expectations from it.
"""
import os

import numpy as np

HEADER = '* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)={rdr}_{ldr}_{camf}_{l128}_{camr}, timestamp={t}'
#: sequence -> (description, calibration dx, dy, number of frames)
SEQUENCES = {'10': ('urban,night,normal', -2.54, 0.3, 8), '11': ('highway,day,sleet', -2.5, 0.25, 12),
             '19': ('alleyway,night,heavysnow', -2.6, 0.35, 8)}
#: (sequence, frame index, object index, v2.1 visibility) of the odd visibility values
ODD_VISIBILITY = [('11', 3, 8, 'LL'), ('11', 7, 2, 'LR'), ('19', 5, 0, 'l')]
#: (sequence, frame index, object index, class) of the classes beyond the benchmark's five
EXTRA_CLASSES = [('10', 2, 1, 'Pedestrian Group'), ('11', 1, 0, 'Pedestrian Group'), ('19', 2, 1, 'Bicycle Group')]
#: (sequence, frame index, object index, yaw in degrees) outside +-180
ODD_YAW = [('10', 1, 0, -329.9), ('11', 4, 1, 457.4), ('19', 3, 0, 190.25), ('19', 6, 1, -181.5)]
#: (sequence, frame index) without objects
HEADER_ONLY = [('10', 5), ('11', 10), ('19', 7)]
#: (sequence, frame index) whose v2.0 file glues the first object onto the header
GLUED = [('10', 0), ('11', 6), ('19', 4)]
#: (sequence, frame index) whose v2.x files have no final newline / trailing spaces
NO_NEWLINE = [('10', 3), ('11', 2), ('11', 9), ('19', 1)]
TRAILING = [('10', 4), ('11', 5)]


def _frames():
    out = []
    for seq, (_, _, _, n) in sorted(SEQUENCES.items(), key=lambda kv: int(kv[0])):
        diff = 33
        for k in range(n):
            rdr = 100 + 7 * int(seq) + k
            out.append((seq, k, '{:05d}_{:05d}.txt'.format(rdr, rdr - diff), rdr, rdr - diff))
    return out


def write_tree(root):
    """Write the tree under ``root``; returns its paths and the lists it wrote."""
    rs = np.random.RandomState(7)
    labels = os.path.join(root, 'kradar_revised_label_v2_0_and_v2_1')
    v20 = os.path.join(labels, 'kradar_revised_label_v2_0', 'KRadar_refined_label_by_UWIPL')
    v21 = os.path.join(labels, 'kradar_revised_label_v2_1', 'KRadar_revised_visibility')
    data = os.path.join(root, 'data')
    for seq, (desc, dx, dy, _) in SEQUENCES.items():
        for d in (os.path.join(data, seq, 'info_label'), os.path.join(data, seq, 'info_calib'),
                  os.path.join(v20, seq), os.path.join(v21, seq)):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(data, seq, 'description.txt'), 'w') as f:
            f.write(desc)
        with open(os.path.join(data, seq, 'info_calib', 'calib_radar_lidar.txt'), 'w') as f:
            f.write('frame difference,x,y\n33,{},{}'.format(dx, dy))
    lookup = lambda table: dict(((s, k, o), v) for s, k, o, v in table)
    vis, cls, yaw = lookup(ODD_VISIBILITY), lookup(EXTRA_CLASSES), lookup(ODD_YAW)
    frames = _frames()
    for seq, k, name, rdr, ldr in frames:
        header = HEADER.format(rdr=rdr, ldr=ldr, camf=rdr + 2, l128=ldr + 1, camr=rdr + 1,
                               t='16432929{:02d}.{:09d}'.format(k, 107358726 + k))
        need = max([o + 1 for s, f, o, _ in ODD_VISIBILITY + EXTRA_CLASSES + ODD_YAW if (s, f) == (seq, k)] + [1])
        n = 0 if (seq, k) in HEADER_ONLY else (10 if (seq, k) == ('11', 3) else max(need, int(rs.randint(1, 5))))
        v1, v2_0, v2_1 = [header], [header], [header]
        for o in range(n):
            name_o = cls.get((seq, k, o), 'Sedan' if rs.rand() < 0.8 else 'Bus or Truck')
            x, y, z = rs.uniform(3, 60), rs.uniform(-10, 10), rs.uniform(-1, 1)
            th = yaw.get((seq, k, o), rs.uniform(-179, 179))
            hl, hw, hh = rs.uniform(1.5, 3), rs.uniform(0.7, 1.2), rs.uniform(0.6, 1.0)
            geo = '{:.6f}, {:.6f}, {:.6f}, {:.4f}, {:.4f}, {:.4f}, {:.4f}'.format(x, y, z, th, hl, hw, hh)
            avail = vis.get((seq, k, o), ['R', 'R', 'L', 'L1'][int(rs.randint(0, 4))])
            v1.append('{}, {}, {}, {}, {}'.format('#' if (seq, k, o) == ('10', 6, 0) else '*', o, o - 1, name_o, geo))
            v2_0.append('*, {}, {}, {}'.format(o + 1, name_o, geo))
            v2_1.append('*, {}, {}, {}, {}'.format(avail, o + 1, name_o, geo))
        if (seq, k) == ('19', 0):
            v1.append('*, 9, 8, Sedan, 1.0, 2.0, 3.0')                      # '* split err' in K-Radar's loader
        if (seq, k) in GLUED:                                                # v2.0 glues the first object on
            v2_0[0:2] = [v2_0[0] + v2_0[1]] if n else v2_0[0:1]
        end = '' if (seq, k) in NO_NEWLINE else '\n'
        space = ' ' if (seq, k) in TRAILING else ''
        _write(os.path.join(data, seq, 'info_label', name), ('\r\n' if seq == '19' else '\n').join(v1) + '\n')
        _write(os.path.join(v20, seq, name), '\n'.join(line + space for line in v2_0) + end)
        _write(os.path.join(v21, seq, name), '\n'.join(line + space for line in v2_1) + end)
    entries = ['{},{}'.format(seq, name) for seq, _, name, _, _ in frames]
    test = entries[1::2]
    train = entries[0::2]
    split = os.path.join(root, 'split')
    os.makedirs(split)
    _write(os.path.join(split, 'train.txt'), '\n'.join(train))             # K-Radar's own: no final newline
    _write(os.path.join(split, 'test.txt'), '\n'.join(test))
    forks = {
        # a fork's train.txt: test frames appended to a list without a final newline (one glued line)
        'appended': {'train.txt': '\n'.join(train) + '\n'.join(test[:4]), 'test.txt': '\n'.join(test)},
        # the same fork once the line break is repaired: train/test overlap of 4 frames
        'overlap': {'train.txt': '\n'.join(train + test[:4]), 'test.txt': '\n'.join(test)},
        # a fork's test.txt with entries commented out, and a frame listed twice
        'commented': {'train.txt': '\n'.join(train + train[:1]),
                      'test.txt': '\n'.join(('# ' + e) if i % 3 == 0 else e for i, e in enumerate(test))},
        # condition splits and a one-sequence list
        'conditions': {'train_sleet.txt': '\n'.join(e for e in train if e.startswith('11,')),
                       'train_snow.txt': '\n'.join(e for e in train if e.startswith('19,')),
                       'test_10.txt': '\n'.join(e for e in entries if e.startswith('10,'))},
    }
    for fork, files in forks.items():
        os.makedirs(os.path.join(root, 'split_' + fork))
        for fname, text in files.items():
            _write(os.path.join(root, 'split_' + fork, fname), text)
    return {'root': data, 'labels_dir': labels, 'split_dir': split, 'frames': frames, 'train': train, 'test': test,
            'forks': dict((f, os.path.join(root, 'split_' + f)) for f in forks)}


def _write(path, text):
    with open(path, 'w', newline='') as f:
        f.write(text)
