"""Deterministic synthetic K-Radar data for the demo and the tests (numpy only).

What it writes under ``out_dir`` (EchoFusion's layout: ``data_root/<seq>/<relative path>``):

- ``kradar_infos_train.pkl`` / ``kradar_infos_val.pkl``: lists of per-frame info dicts in EchoFusion's exact
  format (``get_kradar_image_info``): ``capture_time``, ``road_type``, ``climate``, ``image``, ``radar``,
  ``point_cloud``, ``calib`` and ``annos`` with ``name``, ``truncated`` 0.0, ``occluded`` 0, ``alpha`` 0,
  ``bbox`` [50, 50, 150, 150], ``dimensions`` (w, h, l), ``location`` (-y, -z, x) of the box centre in the
  radar frame (calibration shift already applied), ``rotation_y`` (yaw, radians), ``score`` zeros and
  ``label_file`` ("seq,label").
- ``<seq>/radar_bev/bev_<frame>.npy``: a small float32 BEV radar tensor ``(2, X, Y)`` per frame, named by
  ``info['radar']['bev_path']``. Channel 0 is a power map: every object is an anisotropic Gaussian peak
  elongated along its heading (sigma = length/4, width/4), seen with a small position / heading / elevation
  error and an amplitude in [0.29, 1.0] that falls with range; weaker clutter peaks and a noise floor are
  added. Channel 1 holds the elevation (centre z) of the object that dominates a cell.
  Rows run along x (forward) and columns along y (left); see ``DEMO_GRID``.
- ``demo_meta.json``: the generation parameters; a second call with the same parameters does nothing.

Frames include 'Sedan' and some 'Bus or Truck' objects, objects outside EchoFusion's ROI (range, +-50 deg
azimuth), a frame without any object and a frame whose objects are all outside the ROI (no valid GT).
"""
import json
import os
import os.path as osp
import pickle

import numpy as np

DEMO_VERSION = 3  # 3: conditions per sequence (K-Radar description.txt values)

# BEV grid of the demo radar tensor (metres, radar frame: x forward, y left). Cell (i, j) covers
# x in [x_min + i*cell, x_min + (i+1)*cell), y in [y_min + j*cell, y_min + (j+1)*cell).
DEMO_GRID = {'x_min': 0.0, 'x_max': 80.0, 'y_min': -16.0, 'y_max': 16.0, 'cell': 0.5}

# (l, w, h) ranges in metres per class.
CLASS_SIZES = {
    'Sedan': ((3.8, 5.2), (1.65, 2.05), (1.35, 1.8)),
    'Bus or Truck': ((8.0, 12.0), (2.4, 2.7), (2.8, 3.5)),
}

SEQUENCES = ('1', '2', '3', '4')
ROAD_TYPES = ('urban', 'highway', 'alleyway', 'university')
CLIMATES = ('normal', 'overcast', 'fog', 'rain', 'sleet', 'lightsnow', 'heavysnow')
# K-Radar describes each sequence (description.txt: road_type,capture_time,climate); EchoFusion copies the
# fields into every frame's info and keeps the newline that ends the file on the last one
SEQUENCE_CONDITIONS = {'1': ('urban', 'day', 'normal'), '2': ('highway', 'night', 'fog'),
                       '3': ('alleyway', 'day', 'rain'), '4': ('university', 'night', 'heavysnow')}
# camera->velo style fixed rotation used by EchoFusion for 'location' = R @ (x, y, z)
_CAM_FROM_RADAR = np.array([[0., -1., 0.], [0., 0., -1.], [1., 0., 0.]])


def grid_shape(grid=None):
    """(X, Y) number of cells of the BEV grid."""
    g = DEMO_GRID if grid is None else grid
    nx = int(round((g['x_max'] - g['x_min']) / g['cell']))
    ny = int(round((g['y_max'] - g['y_min']) / g['cell']))
    return nx, ny


def _sample_size(rng, name):
    (l0, l1), (w0, w1), (h0, h1) = CLASS_SIZES[name]
    return rng.uniform(l0, l1), rng.uniform(w0, w1), rng.uniform(h0, h1)


def _sample_yaw(rng):
    if rng.rand() < 0.2:
        return rng.uniform(-np.pi, np.pi)
    yaw = rng.normal(0.0, 0.12)
    if rng.rand() < 0.4:  # oncoming traffic
        yaw += np.pi
    return float(np.arctan2(np.sin(yaw), np.cos(yaw)))


def _sample_centre(rng, where):
    """Centre (x, y) in the radar frame. 'roi': inside EchoFusion's ROI; 'far': beyond 72 m; 'side': |y| >
    6.4 m; 'wide': inside the range box but more than 50 deg off axis."""
    if where == 'roi':
        x = rng.uniform(6.0, 70.0)
        return x, rng.uniform(-min(6.0, 0.9 * x), min(6.0, 0.9 * x))
    if where == 'far':
        return rng.uniform(73.5, 78.0), rng.uniform(-5.0, 5.0)
    if where == 'side':
        return rng.uniform(8.0, 60.0), rng.choice([-1.0, 1.0]) * rng.uniform(7.5, 13.5)
    if where == 'wide':
        return rng.uniform(2.5, 4.0), rng.choice([-1.0, 1.0]) * rng.uniform(5.2, 6.2)
    raise ValueError('unknown placement {!r}'.format(where))


def _frame_objects(rng, kind):
    """List of objects (name, x, y, z_centre, l, w, h, yaw) for one frame.

    kind: 'normal', 'empty' (no object) or 'no_valid' (objects, none inside the ROI as a Sedan)."""
    if kind == 'empty':
        return []
    if kind == 'no_valid':
        plan = [('Sedan', 'far'), ('Sedan', 'side'), ('Bus or Truck', 'roi')]
    else:
        plan = []
        for _ in range(rng.randint(1, 6)):
            name = 'Bus or Truck' if rng.rand() < 0.12 else 'Sedan'
            where = 'roi' if rng.rand() < 0.85 else ['far', 'side', 'wide'][rng.randint(0, 3)]
            plan.append((name, where))
    objects = []
    for name, where in plan:
        for _attempt in range(20):
            x, y = _sample_centre(rng, where)
            l, w, h = _sample_size(rng, name)
            # keep objects apart so that their peaks stay separate (radius ~ half length + 1.5 m)
            if all(np.hypot(x - o[1], y - o[2]) > 0.5 * (l + o[4]) + 1.5 for o in objects):
                break
        else:
            continue
        z_ground = rng.uniform(-1.2, -0.8)
        objects.append((name, x, y, z_ground + 0.5 * h, l, w, h, _sample_yaw(rng)))
    return objects


def render_radar_tensor(objects, rng, grid=None, clutter=True, sensor_noise=True):
    """(2, X, Y) float32 BEV tensor: channel 0 power (one anisotropic Gaussian per object + clutter + noise
    floor), channel 1 elevation (centre z of the object dominating each cell). ``sensor_noise=False`` draws
    every object exactly where it is with amplitude 1 (for tests)."""
    g = DEMO_GRID if grid is None else grid
    nx, ny = grid_shape(g)
    xs = g['x_min'] + (np.arange(nx) + 0.5) * g['cell']
    ys = g['y_min'] + (np.arange(ny) + 0.5) * g['cell']
    gx, gy = np.meshgrid(xs, ys, indexing='ij')
    power = np.abs(rng.normal(0.0, 0.02, size=(nx, ny))) if sensor_noise else np.zeros((nx, ny))
    elevation = np.zeros((nx, ny))
    blobs = []
    for name, x, y, z, l, w, h, yaw in objects:
        if not sensor_noise:
            blobs.append((x, y, z, l / 4.0, w / 4.0, yaw, 1.0))
            continue
        # the sensor sees each object with some position / heading / elevation error, and weaker far away
        amp = rng.uniform(0.45, 1.0) * (1.0 - 0.35 * min(max(x, 0.0), 80.0) / 80.0)
        blobs.append((x + rng.normal(0.0, 0.25), y + rng.normal(0.0, 0.2), z + rng.normal(0.0, 0.15),
                      l / 4.0, w / 4.0, yaw + rng.normal(0.0, 0.06), amp))
    if clutter:
        for _ in range(rng.randint(0, 4)):
            s = rng.uniform(0.4, 0.7)
            blobs.append((rng.uniform(3.0, 78.0), rng.uniform(-14.0, 14.0), rng.uniform(-1.0, 1.0), s, s,
                          0.0, rng.uniform(0.12, 0.45)))
    for x, y, z, sl, sw, yaw, amp in blobs:
        c, s = np.cos(yaw), np.sin(yaw)
        u = (gx - x) * c + (gy - y) * s      # along heading
        v = -(gx - x) * s + (gy - y) * c     # lateral
        blob = amp * np.exp(-0.5 * ((u / sl) ** 2 + (v / sw) ** 2))
        dominant = blob > power
        elevation[dominant] = z
        power = np.maximum(power, blob)
    return np.stack([power, elevation]).astype(np.float32)


def _calib(rng):
    """EchoFusion-style calib dict (4x4 matrices); Tr_velo_to_radar carries the [X, Y, 0.7] shift."""
    p2 = np.array([[557.72, 0., 636.72, 0.], [0., 567.21, 369.31, 0.], [0., 0., 1., 0.], [0., 0., 0., 1.]])
    eye = np.eye(4)
    tr_cam = np.eye(4)
    tr_cam[:3, :3] = np.array([[0., -1., 0.], [0., 0., -1.], [1., 0., 0.]])
    tr_cam[:3, 3] = [0.1, 0.0, -0.7]
    tr_radar = np.eye(4)
    tr_radar[:3, 3] = [rng.uniform(-2.6, -2.4), rng.uniform(0.2, 0.4), 0.7]
    return {'P0': eye.copy(), 'P1': eye.copy(), 'P2': p2, 'P3': eye.copy(), 'R0_rect': eye.copy(),
            'Tr_velo_to_cam': tr_cam, 'Tr_velo_to_radar': tr_radar}


def objects_to_annos(objects, label_file):
    """EchoFusion ``annos`` dict (``get_label_anno`` + calib shift) for objects in the radar frame."""
    n = len(objects)
    arr = np.array([o[1:] for o in objects], dtype=np.float64).reshape(n, 7)
    xyz, lwh, yaw = arr[:, 0:3], arr[:, 3:6], arr[:, 6]
    return {
        'name': np.array([o[0] for o in objects]),
        'truncated': np.array([0.0] * n),
        'occluded': np.array([0] * n),
        'alpha': np.array([0.0] * n),
        'bbox': np.array([[50, 50, 150, 150]] * n).reshape(-1, 4),
        'dimensions': lwh[:, [1, 2, 0]].reshape(-1, 3),      # (w, h, l)
        'location': (xyz @ _CAM_FROM_RADAR.T).reshape(-1, 3),  # (-y, -z, x)
        'rotation_y': yaw.reshape(-1),
        'score': np.zeros([n]),
        'label_file': label_file,
    }


def _frame_kinds(num_frames, rng):
    kinds = ['normal'] * num_frames
    if num_frames >= 4:
        kinds[1] = 'empty'
        kinds[num_frames // 2] = 'no_valid'
    elif num_frames >= 2:
        kinds[1] = 'empty'
    return kinds


def generate_split(out_dir, split, num_frames, seed, start_index=0):
    """Write the radar tensors of one split and return its info list (EchoFusion format)."""
    rng = np.random.RandomState(seed)
    calibs = {seq: _calib(rng) for seq in SEQUENCES}
    kinds = _frame_kinds(num_frames, rng)
    infos = []
    for k in range(num_frames):
        frame_rng = np.random.RandomState([seed, start_index + k])
        seq = SEQUENCES[k * len(SEQUENCES) // max(num_frames, 1)]
        rdr_idx = '{:05d}'.format(start_index + k)
        objects = _frame_objects(frame_rng, kinds[k])
        tensor = render_radar_tensor(objects, frame_rng)
        bev_rel = osp.join('radar_bev', 'bev_{}.npy'.format(rdr_idx))
        os.makedirs(osp.join(out_dir, seq, 'radar_bev'), exist_ok=True)
        np.save(osp.join(out_dir, seq, bev_rel), tensor)
        info = {
            'road_type': SEQUENCE_CONDITIONS[seq][0],
            'capture_time': SEQUENCE_CONDITIONS[seq][1],
            'climate': SEQUENCE_CONDITIONS[seq][2] + '\n',
            'image': {'image_idx': start_index + k,
                      'image_path': osp.join('images', 'cam-front_{}.png'.format(rdr_idx)),
                      'image_shape': np.array([720, 1280], dtype=np.int32)},
            'radar': {'ds_rdr_path': osp.join('radar_zyx_cube', 'cube_{}.mat'.format(rdr_idx)),
                      'sp_rdr_path': osp.join('sp_rdr_cube', 'spcube_{}.npy'.format(rdr_idx)),
                      'ds_pcd_path': osp.join('radar_dense_pcd', 'dspcd_{}.npy'.format(rdr_idx)),
                      'ra_path': osp.join('radar_ra', 'ra_{}.npy'.format(rdr_idx)),
                      'bev_path': bev_rel},
            'point_cloud': {'num_features': 9},
            'calib': calibs[seq],
            'annos': objects_to_annos(objects, '{},{}_{}.txt'.format(seq, rdr_idx, rdr_idx)),
        }
        infos.append(info)
    return infos


def generate_demo_dataset(out_dir, frames=100, train_frames=None, seed=0, force=False):
    """Create (or reuse) the demo dataset under ``out_dir``; returns a dict of the info pickle paths.

    ``frames`` validation frames and ``train_frames`` (default ``max(4, frames // 2)``) training frames.
    Deterministic for given (frames, train_frames, seed); skipped when ``demo_meta.json`` already records the
    same parameters and both pickles exist, unless ``force``."""
    if frames < 1:
        raise ValueError('frames must be >= 1, got {}'.format(frames))
    if train_frames is None:
        train_frames = max(4, frames // 2)
    params = {'version': DEMO_VERSION, 'frames': int(frames), 'train_frames': int(train_frames),
              'seed': int(seed), 'grid': DEMO_GRID}
    paths = {'train': osp.join(out_dir, 'kradar_infos_train.pkl'),
             'val': osp.join(out_dir, 'kradar_infos_val.pkl'),
             'meta': osp.join(out_dir, 'demo_meta.json')}
    if not force and all(osp.exists(p) for p in paths.values()):
        with open(paths['meta']) as f:
            if json.load(f) == params:
                return dict(paths, generated=False)
    os.makedirs(out_dir, exist_ok=True)
    if osp.exists(paths['meta']):
        os.remove(paths['meta'])  # invalidate first: an interrupted run must not look complete
    val = generate_split(out_dir, 'val', frames, seed * 1000 + 1, start_index=0)
    train = generate_split(out_dir, 'train', train_frames, seed * 1000 + 2, start_index=frames)
    for split, infos in (('train', train), ('val', val)):
        tmp = paths[split] + '.tmp'
        with open(tmp, 'wb') as f:
            pickle.dump(infos, f, protocol=2)
        os.replace(tmp, paths[split])
    with open(paths['meta'], 'w') as f:
        json.dump(params, f, indent=1, sort_keys=True)
    return dict(paths, generated=True)
