"""Per-frame info dicts in EchoFusion's layout (``tools/kradar/create_data.py kradar``) from K-Radar's own
files, for any label version, without reading or writing sensor files.

``annos`` is what EchoFusion's ``get_label_anno`` and its calibration step store, with the same arrays
(values and dtypes, also for a frame without objects): ``name``, ``truncated`` 0, ``occluded`` 0, ``alpha`` 0,
``bbox`` [50, 50, 150, 150], ``dimensions`` (w, h, l) full sizes, ``location`` (-y, -z, x) of the calibrated
radar-frame centre (a pseudo-camera frame), ``rotation_y`` = yaw * pi / 180, ``score`` 0 and ``label_file``
``'<seq>,<label>'``; plus ``avail`` where the version has it (v1.1, v2.1). Each info adds ``label_version``,
``sequence``, ``frame`` (the header's sensor indices and timestamp), the conditions of ``description.txt``
(stripped), EchoFusion's relative sensor paths (not checked unless asked) and its calibration matrices (see
:func:`calib_matrices`).
"""
import os

import numpy as np

from .calibration import Z_OFFSET
from .errors import KRadarFileError
from .radar_frame import kept

#: EchoFusion's fixed rotation of (x, y, z) into its pseudo-camera frame: (-y, -z, x)
CAM_FROM_RADAR = np.array([[0, -1, 0], [0, 0, -1], [1, 0, 0]])
#: the shape EchoFusion stores (read from its undistorted front image, K-Radar's 1280 x 720 camera); shared,
#: read-only: mmdet3d's KittiDataset.format_results reads it for every frame
IMAGE_SHAPE = np.array([720, 1280], dtype=np.int32)
#: the dataset's own sensor files, checked with ``check_sensors`` (EchoFusion's converter reads them)
RAW_SENSOR_FILES = ('cam-front/cam-front_{camf}.png', 'radar_zyx_cube/cube_{rdr}.mat')


_MATRICES = {}


def calib_matrices(dx, dy, z_offset=Z_OFFSET):
    """EchoFusion's per-frame ``calib`` (4x4): ``P0``/``P1``/``P3`` identity rows, ``P2`` the front camera's
    intrinsics (EchoFusion stores OpenCV's undistorted-camera matrix there, from images it writes; this
    converter writes none), ``R0_rect`` identity, ``Tr_velo_to_cam`` its fixed LiDAR-to-camera pose (yaw -0.5
    deg, pitch 0.7 deg, (0.1, 0, -0.7) m), ``Tr_velo_to_radar`` the calibration shift."""
    p0 = np.vstack([np.eye(3, 4), [0., 0., 0., 1.]])
    k = np.array([[557.720776478944, 0., 636.720776478944, 0.], [0., 567.2136917114258, 369.3068656921387, 0.],
                  [0., 0., 1., 0.], [0., 0., 0., 1.]])
    yaw, pitch = np.deg2rad(-0.5), np.deg2rad(0.7)
    rz = np.array([[np.cos(yaw), -np.sin(yaw), 0.], [np.sin(yaw), np.cos(yaw), 0.], [0., 0., 1.]])
    ry = np.array([[np.cos(pitch), 0., np.sin(pitch)], [0., 1., 0.], [-np.sin(pitch), 0., np.cos(pitch)]])
    velo_to_cam = np.eye(4)
    velo_to_cam[:3, :3] = (ry @ rz) @ CAM_FROM_RADAR
    velo_to_cam[:3, 3] = [0.1, 0.0, -0.7]
    velo_to_radar = np.eye(4)
    velo_to_radar[:3, 3] = [dx, dy, z_offset]
    return {'P0': p0.copy(), 'P1': p0.copy(), 'P2': k, 'P3': p0.copy(), 'R0_rect': np.eye(4),
            'Tr_velo_to_cam': velo_to_cam, 'Tr_velo_to_radar': velo_to_radar}


_INT = np.array([0]).dtype      # the platform's default integer, what np.array([0, ...]) gives
_BBOX = np.array([[50, 50, 150, 150]])


#: EchoFusion's annos of a frame without objects: arrays built from empty lists, float64 (copied per frame)
_EMPTY = {'name': np.array([]), 'truncated': np.array([]), 'occluded': np.array([]), 'alpha': np.array([]),
          'bbox': np.array([]).reshape(-1, 4), 'dimensions': np.array([]).reshape(-1, 3)[:, [1, 2, 0]] * 2,
          'location': np.array([]).reshape(-1, 3) @ CAM_FROM_RADAR.T,
          'rotation_y': np.array([]).reshape(-1) * np.pi / 180, 'score': np.zeros([0])}
_EMPTY_ITEMS = tuple(_EMPTY.items())


def echofusion_annos(objects, dx, dy, label_file, z_offset=Z_OFFSET, avail=False):
    """EchoFusion's ``annos`` of one frame's :class:`~.labels.LabelObject` list and calibration (dx, dy)."""
    return bulk_annos([objects], [(dx, dy)], [label_file], z_offset, avail)[0]


def bulk_annos(frames, offsets, label_files, z_offset=Z_OFFSET, avail=False):
    """EchoFusion's ``annos`` of many frames (object lists, (dx, dy) each): the arithmetic on all objects at
    once, in EchoFusion's operations (``(-y, -z, x) + (-dy, -z_offset, dx)``, ``yaw * pi / 180``, halves
    times 2), so each frame's arrays equal EchoFusion's in values, dtypes and shapes."""
    counts = [len(objs) for objs in frames]
    flat = [o for objs in frames for o in objs]
    n = len(flat)
    if n:
        values = np.array([o[4:] for o in flat], dtype=np.float64).reshape(n, 7)    # x y z yaw l/2 w/2 h/2
        shift = np.repeat(np.array([[-dy, -z_offset, dx] for dx, dy in offsets], dtype=np.float64).reshape(-1, 3),
                          counts, axis=0)
        location = np.stack([-values[:, 1], -values[:, 2], values[:, 0]], axis=1) + shift
        dimensions = values[:, [5, 6, 4]] * 2
        rotation = values[:, 3] * np.pi / 180
        truncated, occluded, alpha, score = np.zeros(n), np.zeros(n, dtype=_INT), np.zeros(n), np.zeros(n)
        bbox = np.repeat(_BBOX, n, axis=0)
    out = []
    start = 0
    for objs, count, label_file in zip(frames, counts, label_files):
        if count == 0:
            annos = dict((k, v.copy()) for k, v in _EMPTY_ITEMS)     # each frame owns its arrays
        else:
            end = start + count
            # row slices of arrays made for this call: disjoint, so each frame's arrays are its own (an
            # in-place change touches no other frame) and pickle as that frame's values alone
            annos = {'name': np.array([o.name for o in objs]), 'truncated': truncated[start:end],
                     'occluded': occluded[start:end], 'alpha': alpha[start:end], 'bbox': bbox[start:end],
                     'dimensions': dimensions[start:end], 'location': location[start:end],
                     'rotation_y': rotation[start:end], 'score': score[start:end]}
            start = end
        if avail:     # '<U2' as R/L/L1 need; wider where a file writes a longer visibility value
            values = [o.avail for o in objs]
            annos['avail'] = np.array(values, dtype='<U{}'.format(max([2] + [len(v) for v in values])))
        annos['label_file'] = label_file
        out.append(annos)
    return out


def split_infos(tree, entries, labels, z_offset=Z_OFFSET, only_r=False, extra_paths=None, check_sensors=False):
    """The info dicts of split ``entries`` (:class:`~.splits.SplitEntry`) and their parsed ``labels``."""
    infos = [frame_info(tree, entry, index, label, z_offset, extra_paths, check_sensors)
             for index, (entry, label) in enumerate(zip(entries, labels))]
    calibs = [tree.calibration(e.sequence) for e in entries]
    annos = bulk_annos([kept(label.objects, only_r) for label in labels], [(c.x, c.y) for c in calibs],
                       [e.line for e in entries], z_offset, avail=tree.label_version in ('v1.1', 'v2.1'))
    for info, anno in zip(infos, annos):
        info['annos'] = anno
    return infos


def frame_info(tree, entry, index, label, z_offset=Z_OFFSET, extra_paths=None, check_sensors=False):
    """The info dict of one frame without ``annos`` (``index`` in its split)."""
    calib, desc, fmt = tree.calibration(entry.sequence), tree.description(entry.sequence), label.indices
    matrices = _MATRICES.get((calib.x, calib.y, z_offset))
    if matrices is None:   # one set per sequence, shared by its frames (as read-only as EchoFusion's)
        matrices = _MATRICES[(calib.x, calib.y, z_offset)] = calib_matrices(calib.x, calib.y, z_offset)
    rdr, camf = fmt['rdr'], fmt['camf']
    radar = {'ds_rdr_path': 'radar_zyx_cube/cube_' + rdr + '.mat', 'sp_rdr_path': 'sp_rdr_cube/spcube_' + rdr + '.npy',
             'ds_pcd_path': 'radar_dense_pcd/dspcd_' + rdr + '.npy', 'ra_path': 'radar_ra/ra_' + rdr + '.npy'}
    for key, pattern in (extra_paths or {}).items():
        radar[key] = pattern.format(**fmt)
    if check_sensors:
        seq_dir = tree.root_of(entry.sequence)
        for pattern in RAW_SENSOR_FILES + tuple((extra_paths or {}).values()):
            path = os.path.join(seq_dir, pattern.format(**fmt))
            if not os.path.isfile(path):
                raise KRadarFileError(path, 'sensor file of frame {!r} (split line) is missing'.format(entry.line))
    frame = dict(fmt, timestamp=label.timestamp)
    return {'road_type': desc.road_type, 'capture_time': desc.capture_time, 'climate': desc.climate,
            'image': {'image_idx': index, 'image_path': 'images/cam-front_' + camf + '.png',
                      'image_shape': IMAGE_SHAPE}, 'radar': radar,
            'point_cloud': {'num_features': 9}, 'calib': dict(matrices), 'label_version': label.version,
            'sequence': entry.sequence, 'frame': frame}
