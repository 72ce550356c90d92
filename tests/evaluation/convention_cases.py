"""Shared cases for the box-convention tests: EchoFusion infos with non-square boxes and yaws all around the
circle, written out from EchoFusion's info definition (no kradar_plugin code)."""
import math

import numpy as np

#: length / width of every object: > 2.17, so a footprint turned by 90 degrees overlaps its original with
#: IoU w / (2 l - w) = 1 / (2 * 2.6 - 1) = 0.238 < 0.3 (no match at any threshold)
ASPECT = 2.6


def objects(yaws, seed=0):
    """Radar-frame objects (x, y, z_centre, l, w, h, yaw), three per frame at x ~ 12, 30, 48 m (18 m apart:
    no detection can reach another object), |y| <= 3, inside EchoFusion's ROI and +-50 deg azimuth."""
    rng = np.random.RandomState(seed)
    out = []
    for k, yaw in enumerate(yaws):
        l = rng.uniform(4.2, 5.2)
        out.append((12.0 + 18.0 * (k % 3) + rng.uniform(-1, 1), rng.uniform(-3, 3), rng.uniform(-0.5, 1.0),
                    l, l / ASPECT, rng.uniform(1.4, 1.9), float(yaw)))
    return out


def frames(objs):
    """Objects grouped three per frame."""
    return [objs[i:i + 3] for i in range(0, len(objs), 3)]


def info(frame_objs):
    """EchoFusion info for one frame (get_label_anno): location (-y, -z, x) of the centre, dimensions
    (w, h, l), rotation_y = yaw."""
    a = np.array(frame_objs, dtype=np.float64).reshape(-1, 7)
    n = len(a)
    return {'image': {'image_idx': 0}, 'annos': {
        'name': np.array(['Sedan'] * n), 'truncated': np.zeros(n), 'occluded': np.zeros(n, dtype=np.int64),
        'alpha': np.zeros(n), 'bbox': np.tile([50., 50., 150., 150.], (n, 1)),
        'dimensions': np.stack([a[:, 4], a[:, 5], a[:, 3]], axis=1),
        'location': np.stack([-a[:, 1], -a[:, 2], a[:, 0]], axis=1),
        'rotation_y': a[:, 6].copy(), 'score': np.zeros(n), 'label_file': '1,label.txt'}}


def camera_boxes(info_):
    """What EchoFusion's get_ann_info stacks: (N, 7) float32 [location, dimensions, rotation_y]."""
    a = info_['annos']
    return np.concatenate([a['location'], a['dimensions'], a['rotation_y'][:, None]], axis=1).astype(np.float32)


#: 48 yaws spread over the whole circle (never a multiple of pi/2)
CIRCLE_YAWS = [-math.pi + (k + 0.5) * 2 * math.pi / 48 for k in range(48)]
#: 48 yaws on the 8 compass directions; read with the wrong convention the footprint angle becomes -yaw,
#: which is the same rectangle for 0, +-pi/2, pi (MIRROR_SAFE) and a 90-degree turn for +-pi/4, +-3pi/4
MIRROR_SAFE = (0.0, math.pi / 2, math.pi, -math.pi / 2)
MIRROR_TURNED = (math.pi / 4, 3 * math.pi / 4, -math.pi / 4, -3 * math.pi / 4)
COMPASS_YAWS = [MIRROR_SAFE[k % 4] for k in range(24)] + [MIRROR_TURNED[k % 4] for k in range(24)]


def compass_scores():
    """Scores for COMPASS_YAWS objects: every MIRROR_SAFE object above every MIRROR_TURNED one."""
    return list(np.linspace(0.95, 0.6, 24)) + list(np.linspace(0.5, 0.2, 24))
