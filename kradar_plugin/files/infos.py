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
from .labels import read_label
from .radar_frame import kept

#: EchoFusion's fixed rotation of (x, y, z) into its pseudo-camera frame: (-y, -z, x)
CAM_FROM_RADAR = np.array([[0, -1, 0], [0, 0, -1], [1, 0, 0]])
#: EchoFusion's relative sensor paths per frame ({rdr}, {camf}, ... are the header's indices)
SENSOR_PATHS = {
    'image': {'image_path': 'images/cam-front_{camf}.png'},
    'radar': {'ds_rdr_path': 'radar_zyx_cube/cube_{rdr}.mat', 'sp_rdr_path': 'sp_rdr_cube/spcube_{rdr}.npy',
              'ds_pcd_path': 'radar_dense_pcd/dspcd_{rdr}.npy', 'ra_path': 'radar_ra/ra_{rdr}.npy'},
}
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


def echofusion_annos(objects, dx, dy, label_file, z_offset=Z_OFFSET, avail=False):
    """EchoFusion's ``annos`` of one frame's :class:`~.labels.LabelObject` list and calibration (dx, dy);
    numpy operations in EchoFusion's order, so the arrays are equal bit for bit."""
    n = len(objects)
    if n == 0:   # EchoFusion builds these from empty lists: float64 arrays
        annos = {'name': np.array([]), 'truncated': np.array([]), 'occluded': np.array([]),
                 'alpha': np.array([]), 'bbox': np.array([]).reshape(-1, 4),
                 'dimensions': np.array([]).reshape(-1, 3)[:, [1, 2, 0]] * 2,
                 'location': np.array([]).reshape(-1, 3) @ CAM_FROM_RADAR.T,
                 'rotation_y': np.array([]).reshape(-1) * np.pi / 180, 'score': np.zeros([0])}
    else:
        location = np.array([[o.x, o.y, o.z] for o in objects]).reshape(-1, 3) @ CAM_FROM_RADAR.T
        location += np.array([dx, dy, z_offset])[None, :] @ CAM_FROM_RADAR.T
        annos = {'name': np.array([o.name for o in objects]), 'truncated': np.array([0.00] * n),
                 'occluded': np.array([0] * n), 'alpha': np.array([float(0)] * n),
                 'bbox': np.array([[50, 50, 150, 150]] * n).reshape(-1, 4),
                 'dimensions': np.array([[o.half_l, o.half_w, o.half_h] for o in objects]).reshape(
                     -1, 3)[:, [1, 2, 0]] * 2,
                 'location': location,
                 'rotation_y': np.array([o.yaw_deg for o in objects]).reshape(-1) * np.pi / 180,
                 'score': np.zeros([n])}
    if avail:
        annos['avail'] = np.array([o.avail for o in objects], dtype='<U2')
    annos['label_file'] = label_file
    return annos


def frame_info(tree, entry, index, label=None, z_offset=Z_OFFSET, only_r=False, extra_paths=None,
               check_sensors=False):
    """The info dict of split entry ``entry`` (:class:`~.splits.SplitEntry`), ``index`` in its split."""
    if label is None:
        label = read_label(tree.label_path(entry.sequence, entry.label), tree.label_version)
    calib = tree.calibration(entry.sequence)
    desc = tree.description(entry.sequence)
    fmt = dict(label.indices)
    matrices = _MATRICES.get((calib.x, calib.y, z_offset))
    if matrices is None:   # one set per sequence, shared by its frames (as read-only as EchoFusion's)
        matrices = _MATRICES[(calib.x, calib.y, z_offset)] = calib_matrices(calib.x, calib.y, z_offset)
    info = {'road_type': desc.road_type, 'capture_time': desc.capture_time, 'climate': desc.climate,
            'image': {'image_idx': index}, 'radar': {}, 'point_cloud': {'num_features': 9},
            'calib': dict(matrices)}
    for group, paths in SENSOR_PATHS.items():
        for key, pattern in paths.items():
            info[group][key] = pattern.format(**fmt)
    for key, pattern in (extra_paths or {}).items():
        info['radar'][key] = pattern.format(**fmt)
    if check_sensors:
        seq_dir = tree.root_of(entry.sequence)
        for pattern in RAW_SENSOR_FILES + tuple((extra_paths or {}).values()):
            path = os.path.join(seq_dir, pattern.format(**fmt))
            if not os.path.isfile(path):
                raise KRadarFileError(path, 'sensor file of frame {!r} (split line) is missing'.format(entry.line))
    info['annos'] = echofusion_annos(kept(label.objects, only_r), calib.x, calib.y, entry.line, z_offset,
                                     avail=label.version in ('v1.1', 'v2.1'))
    info['label_version'] = label.version
    info['sequence'] = entry.sequence
    info['frame'] = dict(label.indices, timestamp=label.timestamp)
    return info
