"""Label objects in the radar frame, exactly as K-Radar's loader (``datasets/kradar_detection_v2_0.py``,
``get_label``) gives them: centre + calibration offsets (x, y, z_offset), yaw in radians (degrees times
``pi / 180``), full sizes (twice the written halves), the track ids and ``avail`` ('R' for versions without
it); ``only_r`` is K-Radar's ``onlyR`` (keeps 'R', drops 'L' and 'L1')."""
import math

from .calibration import Z_OFFSET

_DEG2RAD = math.pi / 180.


def kept(objects, only_r=False, classes=None):
    """The objects K-Radar's ``onlyR`` / ``consider_cls`` keep (``classes``: names, or None for all)."""
    if not only_r and classes is None:
        return objects
    return [o for o in objects if (not only_r or o.avail == 'R') and (classes is None or o.name in classes)]


def kradar_objects(label, calib, z_offset=Z_OFFSET, only_r=False, classes=None):
    """K-Radar's ``meta['label']`` list: ``(class, (x, y, z, yaw, l, w, h), track, avail)`` per object, track
    ``(id, prev_id)`` for v1.0/v1.1 and ``id`` for v2.0/v2.1, with K-Radar's arithmetic (the same floats)."""
    dx, dy, dz = calib.x, calib.y, float(z_offset)
    pairs = label.version in ('v1.0', 'v1.1')
    out = []
    for o in kept(label.objects, only_r, classes):
        track = (o.id, o.prev_id) if pairs else o.id
        out.append((o.name, (o.x + dx, o.y + dy, o.z + dz, o.yaw_deg * _DEG2RAD, 2 * o.half_l, 2 * o.half_w,
                              2 * o.half_h), track, o.avail))
    return out
