"""EchoFusion info pickles and model results -> the evaluator's per-frame layout (pure numpy).

Mirrors EchoFusion's ``KRadarDataset.format_anno`` / ``convert_valid_bboxes`` and mmdet3d's
``Box3DMode.convert`` + ``bbox2result_kitti``: GT keeps the objects of the evaluated classes whose centre lies
strictly inside ``pcd_limit_range`` and whose azimuth lies strictly inside ``azimuth_range``; detections keep
the boxes whose (x, y, z) lies strictly inside ``pcd_limit_range`` (and, where the protocol says so, inside
the azimuth range too). The evaluator layout has ``location`` (y, z, x), ``dimensions`` (l, h, w) and
``rotation_y``; how a model's LiDAR boxes map to it depends on the mmdet3d the model was trained under
(``box_convention``, see ``box_convention``). No torch/mmcv/mmdet3d import: tensors are read through
``.detach().cpu().numpy()`` and mmdet3d box objects through ``.tensor``.
"""
import numpy as np

from kradar_plugin.datasets.box_convention import (info_location_to_radar, lidar_boxes_to_evaluator,
                                                   resolve_box_convention)
from kradar_plugin.datasets.result_io import result_arrays, result_where
from kradar_plugin.evaluation.kradar_eval import kradar_eval
from kradar_plugin.evaluation.protocols import (ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE,
                                                FAKE_2D_BOX, get_protocol)


def _in_roi(centers, pcd_limit_range, azimuth_range):
    lo = np.asarray(pcd_limit_range[:3], dtype=np.float64)
    hi = np.asarray(pcd_limit_range[3:], dtype=np.float64)
    keep = ((centers > lo) & (centers < hi)).all(axis=1)
    if azimuth_range is not None:
        az = np.arctan2(centers[:, 1], centers[:, 0])
        keep &= (az > azimuth_range[0] * np.pi / 180.) & (az < azimuth_range[1] * np.pi / 180.)
    return keep


def info_to_gt_anno(info, class_names=('Sedan',), pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE,
                    azimuth_range=ECHOFUSION_AZIMUTH_RANGE, frame_index=None):
    """One info's ``annos`` -> evaluator GT layout, filtered like EchoFusion's ``format_anno``
    (the result may hold zero objects; whether such a frame is kept is the protocol's business)."""
    where = 'infos[{}]'.format(frame_index if frame_index is not None else '?')
    if not isinstance(info, dict) or 'annos' not in info:
        raise ValueError("{}: expected an EchoFusion info dict with an 'annos' entry, got {}".format(
            where, sorted(info) if isinstance(info, dict) else type(info).__name__))
    annos = info['annos']
    names = np.asarray(annos.get('name', []))
    n = names.shape[0] if names.ndim else 0
    location = np.asarray(annos.get('location', np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    if location.shape[0] != n:
        raise ValueError("{}['annos']: 'location' has {} rows but 'name' has {}".format(where, location.shape[0], n))
    if not np.all(np.isfinite(location)):
        row = int(np.nonzero(~np.isfinite(location).all(axis=1))[0][0])
        raise ValueError("{}['annos']['location'][{}] = {} is not finite".format(where, row, location[row].tolist()))
    centers = info_location_to_radar(location)
    keep = _in_roi(centers, pcd_limit_range, azimuth_range)
    keep &= np.array([str(name) in class_names for name in names], dtype=bool).reshape(-1)
    out = {}
    for key, value in annos.items():
        if key == 'label_file':
            continue
        arr = np.asarray(value)
        if arr.ndim >= 1 and arr.shape[0] == n:
            out[key] = arr[keep]
        else:
            out[key] = value
    for key in ('rotation_y', 'dimensions'):
        if key not in out:
            raise ValueError("{}['annos']: missing field {!r}".format(where, key))
    n_keep = int(keep.sum())
    for key, fill in (('truncated', 0.0), ('occluded', 0), ('alpha', 0.0)):
        if key not in out:
            out[key] = np.full(n_keep, fill)
    if 'bbox' not in out:
        out['bbox'] = np.tile(np.asarray(FAKE_2D_BOX), (n_keep, 1))
    out['name'] = names[keep] if n else np.zeros(0, dtype='<U1')
    out['location'] = location[keep].copy()
    out['location'][:, [0, 1]] *= -1
    dims = np.asarray(out['dimensions'], dtype=np.float64).reshape(-1, 3)
    out['dimensions'] = dims[:, [2, 1, 0]]
    out['rotation_y'] = np.asarray(out['rotation_y'], dtype=np.float64).reshape(-1)
    out['bbox'] = np.asarray(out['bbox'], dtype=np.float64).reshape(-1, 4)
    return out


def result_to_dt_anno(result, class_names, pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE, azimuth_range=None,
                      dt_z_is_bottom=False, frame_index=None, box_convention=None):
    """One frame's model output -> evaluator detection layout (EchoFusion ``convert_valid_bboxes`` + mmdet3d
    ``convert_to(CAM)`` + ``bbox2result_kitti`` + ``format_anno``'s axis flips).

    ``box_convention``: what the LiDAR boxes mean, i.e. the mmdet3d the model was trained under:
    ``'mmdet3d<1.0'`` (0.17.3: dimensions (dx, dz, dy), rotation_y = yaw), ``'mmdet3d>=1.0'`` (1.0.0rc0 and
    later: dimensions (dy, dz, dx), rotation_y = limit_period(-yaw - pi/2, 0.5, 2 pi)), or None for the
    installed mmdet3d's ('mmdet3d<1.0' without mmdet3d). Both: location (y, z, x), alpha = -arctan2(-y, x) +
    rotation_y; formulas and their derivation in ``kradar_plugin.datasets.box_convention``.
    ``azimuth_range`` None keeps EchoFusion's range-only filter. EchoFusion's GT conversion stores the
    label's centre z where mmdet3d expects the bottom, so a model trained on it outputs centre z there
    and the value is used as is; pass ``dt_z_is_bottom=True`` for a model whose z really is the bottom.
    """
    box_convention = resolve_box_convention(box_convention)
    boxes, scores, labels = result_arrays(result, result_where(frame_index), class_names)
    boxes = boxes[:, :7]
    keep = _in_roi(boxes[:, :3], pcd_limit_range, azimuth_range)
    boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
    n = boxes.shape[0]
    if dt_z_is_bottom:
        boxes[:, 2] += boxes[:, 5] / 2.0
    geometry = lidar_boxes_to_evaluator(boxes, box_convention)
    return {
        'name': np.array([class_names[i] for i in labels]) if n else np.zeros(0, dtype='<U1'),
        'truncated': np.zeros(n),
        'occluded': np.zeros(n, dtype=np.int64),
        'alpha': geometry['alpha'],
        'bbox': np.tile(np.asarray(FAKE_2D_BOX, dtype=np.float64), (n, 1)),
        'dimensions': geometry['dimensions'],
        'location': geometry['location'],
        'rotation_y': geometry['rotation_y'],
        'score': scores,
    }


def _protocol_from(protocol, pcd_limit_range, azi_limit_range, overrides):
    overrides = dict(overrides)
    if pcd_limit_range is not None:
        overrides['pcd_limit_range'] = tuple(pcd_limit_range)
    if azi_limit_range is not None:
        overrides['azimuth_range'] = tuple(azi_limit_range)
    return get_protocol(protocol, **overrides)


def _info_list(infos):
    if isinstance(infos, dict):
        for key in ('infos', 'data_list'):
            if key in infos:
                return list(infos[key])
        raise ValueError("infos: a dict without 'infos'/'data_list'; expected a list of info dicts")
    return list(infos)


def build_annos(infos, results, class_names, protocol='legacy', pcd_limit_range=None, azi_limit_range=None,
                dt_z_is_bottom=False, box_convention=None, **protocol_overrides):
    """(gt_annos, dt_annos, kept frame indices, Protocol) from infos and per-frame results; ``box_convention``
    as in ``result_to_dt_anno`` (None: the installed mmdet3d's, looked up once)."""
    box_convention = resolve_box_convention(box_convention)
    infos = _info_list(infos)
    results = list(results)
    if len(infos) != len(results):
        raise ValueError('{} results for {} infos: results must align with the info list frame by frame '
                         '(different counts mean duplicated or truncated distributed results)'.format(
                             len(results), len(infos)))
    proto = _protocol_from(protocol, pcd_limit_range, azi_limit_range, protocol_overrides)
    class_names = tuple(class_names)
    gt_list, dt_list, kept = [], [], []
    for i, (info, result) in enumerate(zip(infos, results)):
        gt = info_to_gt_anno(info, class_names, proto.pcd_limit_range, proto.azimuth_range, frame_index=i)
        if proto.drop_frames_without_gt and len(gt['name']) == 0:
            continue
        dt = result_to_dt_anno(result, class_names, proto.pcd_limit_range,
                               proto.azimuth_range if proto.dt_azimuth_filter else None,
                               dt_z_is_bottom=dt_z_is_bottom, frame_index=i, box_convention=box_convention)
        gt_list.append(gt)
        dt_list.append(dt)
        kept.append(i)
    return gt_list, dt_list, kept, proto


def evaluate_results(infos, results, class_names, protocol='legacy', eval_types=None, pcd_limit_range=None,
                     azi_limit_range=None, dt_z_is_bottom=False, box_convention=None, **protocol_overrides):
    """Evaluate model results against EchoFusion-format infos; returns ``(result_str, metrics_dict)``
    with ``kradar_eval``'s keys (no 'pts_bbox/' prefix). ``box_convention``: 'mmdet3d<1.0', 'mmdet3d>=1.0'
    or None (the installed mmdet3d's), the convention of the mmdet3d the model was trained under."""
    gt_list, dt_list, _, proto = build_annos(infos, results, class_names, protocol, pcd_limit_range,
                                             azi_limit_range, dt_z_is_bottom, box_convention,
                                             **protocol_overrides)
    if eval_types is None:
        eval_types = ('bbox', 'bev', '3d')
    return kradar_eval(gt_list, dt_list, list(class_names), eval_types=eval_types, protocol=proto)
