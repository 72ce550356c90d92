"""A small K-Radar dataset tree in K-Radar's own file formats, for the demo and the tests (numpy only).

Written under ``out_dir`` (the project's data root):

- ``<seq>/info_label/<rdr>_<ldr64>.txt``: v1.0 labels (LiDAR frame, half sizes, yaw in degrees) with the real
  files' quirks: CRLF endings in sequence 2, ``#`` BEV-only lines, frames without objects;
- ``<seq>/info_calib/calib_radar_lidar.txt`` and ``<seq>/description.txt`` (with and without a final newline);
- ``revised_labels/kradar_revised_label_v1_1/<seq>_info_label_revised/``, ``.../kradar_revised_label_v2_0/
  KRadar_refined_label_by_UWIPL/<seq>/`` (some files with the header and first object on one line) and
  ``.../kradar_revised_label_v2_1/KRadar_revised_visibility/<seq>/``, as K-Radar's zip archives unpack;
- ``split/{train,test}.txt`` (K-Radar's, no final newline) and ``ImageSets/{train,val}.txt`` (EchoFusion's);
- ``<seq>/radar_bev/bev_<rdr>.npy``: the demo detector's BEV radar tensor per frame (``demo_data``).

The objects, sequences and conditions are the demo data's (``demo_data``): the same frames, so the same
trained demo checkpoint applies. The v2.0 labels are the v1.0 boxes refined (a few centimetres, a few tenths
of a degree) with one extra box per tenth frame; v1.1/v2.1 mark far objects ``L`` (LiDAR only) and v2.1 the
extra boxes ``L1``.
"""
import json
import math
import os
import os.path as osp

import numpy as np

from . import data as dd

TREE_VERSION = 1
#: (frame difference, x, y) of each demo sequence's calib_radar_lidar.txt
CALIBRATION = {'1': (32, -2.54, 0.3), '2': (28, -2.51, 0.27), '3': (30, -2.48, 0.33), '4': (31, -2.56, 0.29)}
Z_OFFSET = 0.7
HEADER = '* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)={}_{}_{}_{}_{}, timestamp={:.6f}'


def _num(v):
    return '{:.4f}'.format(v)


def _lidar_fields(obj, seq):
    """(class, x, y, z, yaw_deg, l/2, w/2, h/2) text of a radar-frame demo object in the LiDAR frame."""
    name, x, y, z, l, w, h, yaw = obj
    _, dx, dy = CALIBRATION[seq]
    return (name, _num(x - dx), _num(y - dy), _num(z - Z_OFFSET), _num(math.degrees(yaw)), _num(l / 2.),
            _num(w / 2.), _num(h / 2.))


def _refined(obj, rng):
    name, x, y, z, l, w, h, yaw = obj
    return (name, x + rng.uniform(-0.05, 0.05), y + rng.uniform(-0.05, 0.05), z + rng.uniform(-0.03, 0.03),
            l * rng.uniform(0.98, 1.02), w * rng.uniform(0.98, 1.02), h, yaw + math.radians(rng.uniform(-0.3, 0.3)))


def _avail(obj):
    return 'L' if obj[1] > 73.0 or abs(obj[2]) > 13.0 else 'R'


def _write(path, lines, newline='\n', final=True):
    with open(path, 'w', newline='') as f:
        f.write(newline.join(lines) + (newline if final else ''))


def write_frame_labels(out_dir, seq, rdr, objects, rng, revised_root):
    """The four label files of one frame; returns its label file name."""
    diff = CALIBRATION[seq][0]
    ldr = rdr - diff
    name = '{:05d}_{:05d}.txt'.format(rdr, ldr)
    header = HEADER.format('{:05d}'.format(rdr), '{:05d}'.format(ldr), '{:05d}'.format(rdr + 3),
                           '{:05d}'.format(ldr + 1), '{:05d}'.format(rdr + 2), 1600000000.0 + rdr / 10.)
    fields = [_lidar_fields(o, seq) for o in objects]
    v10 = [header] + ['*, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}'.format(k, max(k - 1, -1), *f)
                      for k, f in enumerate(fields)]
    if objects and rdr % 5 == 0:     # a BEV-only box: every loader skips it
        v10.append('#, 99, -1, Sedan, 30.0000, 1.0000, -0.2000, 0.0000, 2.2000, 0.9000, 0.7000')
    _write(osp.join(out_dir, seq, 'info_label', name), v10, newline='\r\n' if seq == '2' else '\n')
    v11 = [header] + ['*, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}'.format(_avail(o), k, max(k - 1, -1), *f)
                      for k, (o, f) in enumerate(zip(objects, fields))]
    _write(osp.join(revised_root['v1.1'], '{}_info_label_revised'.format(seq), name), v11)
    refined = [_refined(o, rng) for o in objects]
    extra = []
    if rdr % 10 == 3:     # a box the refinement added (no v1.1 match)
        extra = [('Sedan', rng.uniform(15.0, 60.0), rng.uniform(-5.0, 5.0), -0.2, 4.4, 1.8, 1.5, rng.uniform(-0.2, 0.2))]
    v2_objects = refined + extra
    v2_fields = [_lidar_fields(o, seq) for o in v2_objects]
    v20 = ['*, {}, {}, {}, {}, {}, {}, {}, {}, {}'.format(k, *f) for k, f in enumerate(v2_fields)]
    if v20 and rdr % 7 == 0:    # K-Radar's v2.0 quirk: the header and the first object on one line
        v20 = [header + v20[0]] + v20[1:]
    else:
        v20 = [header] + v20
    _write(osp.join(revised_root['v2.0'], seq, name), v20)
    v21 = [header] + ['*, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}'.format(
        'L1' if k >= len(refined) else _avail(o), k, *f) for k, (o, f) in enumerate(zip(v2_objects, v2_fields))]
    _write(osp.join(revised_root['v2.1'], seq, name), v21)
    return name


def generate_tree(out_dir, frames=100, train_frames=None, seed=0, force=False):
    """Write (or reuse) the demo tree under ``out_dir``; returns {'root', 'labels_dir', 'split_dir',
    'imagesets', 'generated'}. Deterministic for (frames, train_frames, seed)."""
    train_frames = max(4, frames // 2) if train_frames is None else train_frames
    params = {'tree_version': TREE_VERSION, 'demo_version': dd.DEMO_VERSION, 'frames': int(frames),
              'train_frames': int(train_frames), 'seed': int(seed)}
    meta = osp.join(out_dir, 'demo_tree.json')
    out = {'root': out_dir, 'labels_dir': osp.join(out_dir, 'revised_labels'),
           'split_dir': osp.join(out_dir, 'split'), 'imagesets': osp.join(out_dir, 'ImageSets')}
    if not force and osp.exists(meta):
        with open(meta) as f:
            if json.load(f) == params:
                return dict(out, generated=False)
        os.remove(meta)
    revised_root = {'v1.1': osp.join(out['labels_dir'], 'kradar_revised_label_v1_1'),
                    'v2.0': osp.join(out['labels_dir'], 'kradar_revised_label_v2_0', 'KRadar_refined_label_by_UWIPL'),
                    'v2.1': osp.join(out['labels_dir'], 'kradar_revised_label_v2_1', 'KRadar_revised_visibility')}
    for seq in dd.SEQUENCES:
        for d in (osp.join(out_dir, seq, 'info_label'), osp.join(out_dir, seq, 'info_calib'),
                  osp.join(out_dir, seq, 'radar_bev'), osp.join(revised_root['v1.1'], seq + '_info_label_revised'),
                  osp.join(revised_root['v2.0'], seq), osp.join(revised_root['v2.1'], seq)):
            os.makedirs(d, exist_ok=True)
        diff, x, y = CALIBRATION[seq]
        _write(osp.join(out_dir, seq, 'info_calib', 'calib_radar_lidar.txt'),
               ['frame difference,x,y', '{},{},{}'.format(diff, x, y)])
        _write(osp.join(out_dir, seq, 'description.txt'), [','.join(dd.SEQUENCE_CONDITIONS[seq])],
               final=seq in ('2', '4'))     # K-Radar's writer adds no newline; other copies do
    splits = {}
    for split, n, seed_off, start in (('test', frames, 1, 0), ('train', train_frames, 2, frames)):
        rng = np.random.RandomState(seed * 1000 + seed_off)
        kinds = dd._frame_kinds(n, rng)
        lines = []
        for k in range(n):
            frame_rng = np.random.RandomState([seed * 1000 + seed_off, start + k])
            seq = dd.SEQUENCES[k * len(dd.SEQUENCES) // max(n, 1)]
            rdr = start + k + 40
            objects = dd._frame_objects(frame_rng, kinds[k])
            np.save(osp.join(out_dir, seq, 'radar_bev', 'bev_{:05d}.npy'.format(rdr)),
                    dd.render_radar_tensor(objects, frame_rng))
            name = write_frame_labels(out_dir, seq, rdr, objects, frame_rng, revised_root)
            lines.append('{},{}'.format(seq, name))
        splits[split] = lines
    for d in (out['split_dir'], out['imagesets']):
        os.makedirs(d, exist_ok=True)
    for split, lines in splits.items():
        _write(osp.join(out['split_dir'], split + '.txt'), lines, final=False)
    _write(osp.join(out['imagesets'], 'train.txt'), splits['train'])
    _write(osp.join(out['imagesets'], 'val.txt'), splits['test'])
    with open(meta, 'w') as f:
        json.dump(params, f, indent=1, sort_keys=True)
    return dict(out, generated=True)
