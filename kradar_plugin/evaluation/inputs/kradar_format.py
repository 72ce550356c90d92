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

from kradar_plugin.evaluation.inputs.box_convention import resolve_box_convention
from kradar_plugin.evaluation.inputs.kradar_columns import (Converted, check_frame_counts, dt_columns, gather_infos,
                                                   gather_result_frames, gt_columns, info_list, split_frames)
from kradar_plugin.evaluation.protocols import ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE, get_protocol


def _index(frame_index):
    return ['?' if frame_index is None else frame_index]


def info_to_gt_anno(info, class_names=('Sedan',), pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE,
                    azimuth_range=ECHOFUSION_AZIMUTH_RANGE, frame_index=None):
    """One info's ``annos`` -> evaluator GT layout, filtered like EchoFusion's ``format_anno``
    (the result may hold zero objects; whether such a frame is kept is the protocol's business).
    The evaluator's fields only; missing optional ones filled (truncated, occluded, alpha 0, fake bbox)."""
    data, _ = gt_columns(gather_infos([info], _index(frame_index)), class_names, pcd_limit_range, azimuth_range)
    return data


def result_to_dt_anno(result, class_names, pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE, azimuth_range=None,
                      dt_z_is_bottom=False, frame_index=None, box_convention=None):
    """One frame's model output -> evaluator detection layout (EchoFusion ``convert_valid_bboxes`` + mmdet3d
    ``convert_to(CAM)`` + ``bbox2result_kitti`` + ``format_anno``'s axis flips).

    ``box_convention``: what the LiDAR boxes mean, i.e. the mmdet3d the model was trained under:
    ``'mmdet3d<1.0'`` (0.17.3: dimensions (dx, dz, dy), rotation_y = yaw), ``'mmdet3d>=1.0'`` (1.0.0rc0 and
    later: dimensions (dy, dz, dx), rotation_y = limit_period(-yaw - pi/2, 0.5, 2 pi)), or None for the
    installed mmdet3d's ('mmdet3d<1.0' without mmdet3d). Both: location (y, z, x), alpha = -arctan2(-y, x) +
    rotation_y; formulas and their derivation in ``kradar_plugin.evaluation.inputs.box_convention``.
    ``azimuth_range`` None keeps EchoFusion's range-only filter. EchoFusion's GT conversion stores the
    label's centre z where mmdet3d expects the bottom, so a model trained on it outputs centre z there
    and the value is used as is; pass ``dt_z_is_bottom=True`` for a model whose z really is the bottom.
    """
    frames = gather_result_frames([result], tuple(class_names), _index(frame_index))
    data, _ = dt_columns(frames, tuple(class_names), pcd_limit_range, azimuth_range, dt_z_is_bottom,
                         resolve_box_convention(box_convention))
    return data


def _protocol_from(protocol, pcd_limit_range, azi_limit_range, overrides):
    overrides = dict(overrides)
    if pcd_limit_range is not None:
        overrides['pcd_limit_range'] = tuple(pcd_limit_range)
    if azi_limit_range is not None:
        overrides['azimuth_range'] = tuple(azi_limit_range)
    return get_protocol(protocol, **overrides)


def converted(infos, results, class_names, dt_z_is_bottom=False, box_convention=None):
    """:class:`kradar_columns.Converted`: infos (a list, or a dict with 'infos' / 'data_list') and results
    read once, to convert for one protocol or several (``box_convention`` None: the installed mmdet3d's)."""
    infos, results = info_list(infos), list(results)
    check_frame_counts(len(infos), len(results))
    return Converted(gather_infos(infos), gather_result_frames(results, tuple(class_names)), class_names,
                     resolve_box_convention(box_convention), dt_z_is_bottom)


def build_annos(infos, results, class_names, protocol='legacy', pcd_limit_range=None, azi_limit_range=None,
                dt_z_is_bottom=False, box_convention=None, **protocol_overrides):
    """(gt_annos, dt_annos, kept frame indices, Protocol) from infos and per-frame results; ``box_convention``
    as in ``result_to_dt_anno`` (None: the installed mmdet3d's, looked up once). The per-frame dicts hold the
    evaluator's fields (views into columns converted for all frames at once)."""
    conv = converted(infos, results, class_names, dt_z_is_bottom, box_convention)
    proto = _protocol_from(protocol, pcd_limit_range, azi_limit_range, protocol_overrides)
    gt, gt_off, dt, dt_off, kept = conv.columns(proto)
    return split_frames(gt, gt_off), split_frames(dt, dt_off), kept, proto


def evaluate_results(infos, results, class_names, protocol='legacy', eval_types=None, pcd_limit_range=None,
                     azi_limit_range=None, dt_z_is_bottom=False, box_convention=None, benchmark=None,
                     score_threshold=None, **protocol_overrides):
    """Evaluate model results against EchoFusion-format infos; returns ``(result_str, metrics_dict)``
    with ``kradar_eval``'s keys (no 'pts_bbox/' prefix). ``box_convention``: 'mmdet3d<1.0', 'mmdet3d>=1.0'
    or None (the installed mmdet3d's), the convention of the mmdet3d the model was trained under.
    ``benchmark``: 'v1' or 'v2' (K-Radar's region, replacing ``pcd_limit_range``); ``score_threshold``: keep
    detections with ``score > T``. One ``KRadarEvaluator`` does the work (the dataset evaluations use it
    directly)."""
    evaluator = _evaluator(class_names, protocol, eval_types, pcd_limit_range, azi_limit_range, dt_z_is_bottom,
                           box_convention, benchmark, score_threshold, None, protocol_overrides)
    evaluator.process(info_list(infos), results)
    metrics = evaluator.evaluate()
    return evaluator.evaluations[0].result_str, metrics


def _evaluator(class_names, protocol, eval_types, pcd_limit_range, azi_limit_range, dt_z_is_bottom,
               box_convention, benchmark, score_threshold, conditions, protocol_overrides):
    from kradar_plugin.evaluation.evaluator import KRadarEvaluator
    return KRadarEvaluator(list(class_names), protocol, eval_types or ('bbox', 'bev', '3d'), benchmark=benchmark,
                           pcd_limit_range=pcd_limit_range, azi_limit_range=azi_limit_range,
                           score_threshold=score_threshold, conditions=conditions, box_convention=box_convention,
                           dt_z_is_bottom=dt_z_is_bottom, **protocol_overrides)


def condition_table(infos, results, class_names, protocol='legacy', pcd_limit_range=None, azi_limit_range=None,
                    dt_z_is_bottom=False, box_convention=None, score_threshold=None, fmt='markdown', benchmark=None,
                    **protocol_overrides):
    """K-Radar's per-weather paper table of model results (Total and each weather, AP3D and APBEV), or None
    when the infos carry no conditions (``road_type``, ``capture_time``, ``climate``)."""
    infos = info_list(infos)
    evaluator = _evaluator(class_names, protocol, ('bev', '3d'), pcd_limit_range, azi_limit_range, dt_z_is_bottom,
                           box_convention, benchmark, score_threshold, 'auto', protocol_overrides)
    if evaluator.condition_rows(infos) is None:
        return None
    evaluator.process(infos, results)
    evaluator.evaluate()
    if evaluator.group_error is not None:
        raise evaluator.group_error
    return evaluator.table(fmt)
