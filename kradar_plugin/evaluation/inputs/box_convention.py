"""What a model's LiDAR boxes mean, by the mmdet3d version it was trained under (pure numpy).

EchoFusion-style datasets build their training targets with ``CameraInstance3DBoxes(info boxes)
.convert_to(Box3DMode.LIDAR)`` under whichever mmdet3d is installed, and turn predictions back with
``boxes.convert_to(Box3DMode.CAM)`` + mmdet3d's ``bbox2result_kitti`` + ``format_anno``. mmdet3d 1.0.0rc0
changed ``Box3DMode.convert`` between camera and LiDAR, so the same checkpoint's boxes mean different things
under the two conventions, and the evaluator layout is only right when the model's outputs are read back
with the convention it was TRAINED under:

``'mmdet3d<1.0'`` (0.17.x and older; ``Box3DMode.convert`` in 0.17.3)
    camera -> LiDAR: centre ``(x, y, z) = (loc_z, -loc_x, -loc_y)``; sizes ``(dx, dy, dz) = (cam_dz, cam_dx,
    cam_dy)``; ``yaw = rotation_y`` (unchanged, not wrapped). With EchoFusion's info (dimensions (w, h, l))
    the LiDAR box is ``(x, y, z_centre, l, w, h, rotation_y)``.
    LiDAR -> camera: ``loc = (-y, -z, x)``; sizes ``(dy, dz, dx)``; ``rotation_y = yaw``.

``'mmdet3d>=1.0'`` (1.0.0rc0 .. 1.0.0rc6 and the 1.x line; ``Box3DMode.convert`` in 1.0.0rc6)
    camera -> LiDAR: the same centre; sizes ``(dx, dy, dz) = (cam_dx, cam_dz, cam_dy)``;
    ``yaw = limit_period(-rotation_y - pi/2, 0.5, 2 pi)``. With EchoFusion's info the LiDAR box is
    ``(x, y, z_centre, w, l, h, limit_period(-rotation_y - pi/2))``.
    LiDAR -> camera: ``loc = (-y, -z, x)``; sizes ``(dx, dz, dy)``;
    ``rotation_y = limit_period(-yaw - pi/2, 0.5, 2 pi)``.

``limit_period(v, offset=0.5, period=2 pi) = v - floor(v / period + offset) * period`` (in [-pi, pi)).

Both versions' ``bbox2result_kitti`` then store ``location = cam[:3]``, ``dimensions = cam[3:6]``,
``rotation_y = cam[6]`` and ``alpha = -arctan2(-y, x) + cam[6]`` (x, y of the LiDAR box), and EchoFusion's
``format_anno`` negates ``location[:, [0, 1]]`` and reorders ``dimensions[:, [2, 1, 0]]``. Composed, a LiDAR
box ``(x, y, z, dx, dy, dz, yaw)`` lands in the evaluator layout (table ``EVALUATOR_LAYOUT``) as:

=================  ===================  ===========================================
field              ``'mmdet3d<1.0'``    ``'mmdet3d>=1.0'``
=================  ===================  ===========================================
``location``       ``(y, z, x)``        ``(y, z, x)``
``dimensions``     ``(dx, dz, dy)``     ``(dy, dz, dx)``
``rotation_y``     ``yaw``              ``limit_period(-yaw - pi/2, 0.5, 2 pi)``
``alpha``          ``-arctan2(-y, x) + rotation_y`` (both)
=================  ===================  ===========================================

i.e. under each convention the inverse of that convention's camera -> LiDAR conversion of the info GT, so
GT turned into LiDAR boxes and read back gives the info's own (l, h, w) and rotation_y (wrapped to [-pi, pi)
under ``'mmdet3d>=1.0'``). Reading one convention's boxes with the other swaps length and width and mirrors
the yaw (footprint angle ``-rotation_y`` instead of ``rotation_y``).

This module is also the one home of EchoFusion's camera-style info -> radar frame mapping
(``CAM_TO_RADAR``, ``info_annos_to_radar_boxes``).
"""
import os
import re
import sys

import numpy as np

from kradar_plugin.facts.versions import BOX_CONVENTION_LEGACY as LEGACY
from kradar_plugin.facts.versions import BOX_CONVENTION_V1 as REFACTORED
from kradar_plugin.facts.versions import BOX_CONVENTIONS, mmdet3d_box_convention

# LEGACY = 'mmdet3d<1.0', REFACTORED = 'mmdet3d>=1.0': the accepted ``box_convention`` values (BOX_CONVENTIONS;
# None means the installed mmdet3d's); mmdet3d_box_convention maps a version string to one of them.
#: without mmdet3d installed: EchoFusion's pin (mmdet3d 0.17.3)
CONVENTION_WITHOUT_MMDET3D = LEGACY

#: LiDAR box columns -> evaluator layout, one row per convention (formulas in the module docstring):
#: ``dimensions`` = the LiDAR size columns listed; ``rotation_y`` = wrap?(yaw_sign * yaw + yaw_offset).
EVALUATOR_LAYOUT = {
    LEGACY: dict(dimensions=(3, 5, 4), yaw_sign=1.0, yaw_offset=0.0, wrap_yaw=False),
    REFACTORED: dict(dimensions=(4, 5, 3), yaw_sign=-1.0, yaw_offset=-np.pi / 2, wrap_yaw=True),
}

#: camera-style info location (-y, -z, x) -> radar/LiDAR (x, y, z), as EchoFusion's ``format_anno`` and both
#: mmdet3d versions' camera -> LiDAR ``rt_mat``
CAM_TO_RADAR = np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], dtype=np.float64)


def check_box_convention(box_convention, allow_none=True):
    """``box_convention`` unchanged when valid, else a ValueError naming the option and the allowed values."""
    if (box_convention is None and allow_none) or box_convention in BOX_CONVENTIONS:
        return box_convention
    raise ValueError('box_convention={!r} is not one of {}{}'.format(
        box_convention, list(BOX_CONVENTIONS), ' or None (the installed mmdet3d\'s)' if allow_none else ''))


_VERSION_ASSIGN = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def installed_mmdet3d_version():
    """The mmdet3d version this process uses, WITHOUT importing mmdet3d: the imported module's
    ``__version__`` when already imported, else the distribution metadata (``importlib.metadata``, or the
    ``importlib_metadata`` backport on Python 3.7), else ``mmdet3d/version.py`` of the package that an import
    would find; None when mmdet3d is not installed."""
    module = sys.modules.get('mmdet3d')
    if module is not None and getattr(module, '__version__', None):
        return str(module.__version__)
    try:
        from importlib import metadata  # novermin  (Python >= 3.8)
    except ImportError:
        try:
            import importlib_metadata as metadata
        except ImportError:
            metadata = None
    if metadata is not None:
        try:
            return metadata.version('mmdet3d')
        except Exception:  # PackageNotFoundError, broken metadata: try the source next
            pass
    try:
        import importlib.util
        spec = importlib.util.find_spec('mmdet3d')
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], 'version.py')
    try:
        with open(path) as f:
            match = _VERSION_ASSIGN.search(f.read())
    except (IOError, OSError):
        return None
    return match.group(1) if match else None


def resolve_box_convention(box_convention=None):
    """A valid convention name: ``box_convention`` itself, or for None the installed mmdet3d's ('mmdet3d<1.0'
    without mmdet3d, EchoFusion's pin is 0.17.3, or with a version that cannot be parsed)."""
    if check_box_convention(box_convention) is not None:
        return box_convention
    return mmdet3d_box_convention(installed_mmdet3d_version()) or CONVENTION_WITHOUT_MMDET3D


def limit_period(val, offset=0.5, period=2 * np.pi):
    """mmdet3d's ``limit_period``: ``val - floor(val / period + offset) * period``."""
    val = np.asarray(val, dtype=np.float64)
    return val - np.floor(val / period + offset) * period


def lidar_boxes_to_evaluator(boxes, box_convention):
    """(N, 7+) LiDAR boxes (x, y, z, dx, dy, dz, yaw) of ``box_convention`` -> dict of the evaluator fields
    ``location`` (N, 3) (y, z, x), ``dimensions`` (N, 3) (l, h, w), ``rotation_y`` (N,), ``alpha`` (N,):
    what that convention's ``convert_to(CAM)`` + ``bbox2result_kitti`` + EchoFusion's ``format_anno`` give
    (table in the module docstring). ``box_convention`` must be a name, not None."""
    layout = EVALUATOR_LAYOUT[check_box_convention(box_convention, allow_none=False)]
    boxes = np.asarray(boxes, dtype=np.float64)
    if boxes.size == 0:
        boxes = boxes.reshape(0, 7)
    x, y, z = boxes[:, 0], boxes[:, 1], boxes[:, 2]
    rotation_y = layout['yaw_sign'] * boxes[:, 6] + layout['yaw_offset']
    if layout['wrap_yaw']:
        rotation_y = limit_period(rotation_y)
    return {
        'location': np.stack([y, z, x], axis=1),
        'dimensions': boxes[:, list(layout['dimensions'])].copy(),
        'rotation_y': rotation_y,
        'alpha': -np.arctan2(-y, x) + rotation_y,
    }


def info_location_to_radar(location):
    """(N, 3) EchoFusion info ``location`` (-y, -z, x) -> (N, 3) radar-frame (x, y, z) (same point)."""
    return np.asarray(location, dtype=np.float64).reshape(-1, 3).dot(CAM_TO_RADAR.T)


def info_annos_to_radar_boxes(annos):
    """(N, 7) float64 ``(x, y, z_centre, l, w, h, rotation_y)`` in the radar frame from EchoFusion ``annos``
    (``location`` (-y, -z, x) of the box centre, ``dimensions`` (w, h, l), ``rotation_y`` in radians)."""
    centres = info_location_to_radar(annos['location'])
    dims = np.asarray(annos['dimensions'], dtype=np.float64).reshape(-1, 3)
    yaw = np.asarray(annos['rotation_y'], dtype=np.float64).reshape(-1)
    return np.concatenate([centres, dims[:, [2, 0, 1]], yaw[:, None]], axis=1).reshape(-1, 7)


_META_KEYS = ('meta', 'metainfo', 'metadata')


def recorded_mmdet3d_version(source):
    """The mmdet3d version recorded in a checkpoint (``ckpt['meta']['mmdet3d_version']``, as mmdet3d's
    ``tools/train.py`` stores it), a checkpoint ``meta`` dict, or an info container (``{'metainfo': {...}}``
    with ``mmdet3d_version``); None when nothing records it (EchoFusion's info lists do not)."""
    if not isinstance(source, dict):
        return None
    for inner in [source] + [source.get(key) for key in _META_KEYS]:
        if isinstance(inner, dict) and inner.get('mmdet3d_version'):
            return str(inner['mmdet3d_version'])
    return None


def convention_mismatch_message(in_use, recorded_version, source='the checkpoint meta'):
    """None, or a warning when ``recorded_version`` (the mmdet3d a model or its data was made with, e.g.
    ``recorded_mmdet3d_version(checkpoint)``) implies the other convention than ``in_use`` (a convention
    name, or None for the installed mmdet3d's). An unknown or unparseable ``recorded_version`` gives None."""
    in_use = resolve_box_convention(in_use)
    recorded = mmdet3d_box_convention(recorded_version)
    if recorded is None or recorded == in_use:
        return None
    return ('K-Radar evaluation reads the result boxes with box_convention={!r}, but {} records mmdet3d {}, '
            'whose LiDAR boxes follow {!r} (mmdet3d 1.0.0rc0 changed the camera<->LiDAR box conversion: the '
            'LiDAR sizes are the camera sizes in another order and the yaw became -yaw - pi/2). If the model was '
            'trained under mmdet3d {}, set box_convention={!r} (a dataset attribute/config key, evaluate(..., '
            'box_convention=...), or KRadarEvaluator(..., box_convention=...)); read with the wrong convention, '
            'length and width swap and the yaw is mirrored, which costs tens of AP points.'.format(
                in_use, source, recorded_version, recorded, recorded_version, recorded))
