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
from kradar_plugin.evaluation.inputs.box_convention import resolve_box_convention
from kradar_plugin.evaluation.inputs.kradar_columns import dt_columns, gather_infos, gather_result_frames, gt_columns
from kradar_plugin.evaluation.protocols import ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE


def info_to_gt_anno(info, class_names=('Sedan',), pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE,
                    azimuth_range=ECHOFUSION_AZIMUTH_RANGE, frame_index=None):
    """One info's ``annos`` -> evaluator GT layout, filtered like EchoFusion's ``format_anno``
    (the result may hold zero objects; whether such a frame is kept is the protocol's business).
    The evaluator's fields only; missing optional ones filled (truncated, occluded, alpha 0, fake bbox)."""
    data, _ = gt_columns(gather_infos([info], ['?' if frame_index is None else frame_index]), class_names,
                         pcd_limit_range, azimuth_range)
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
    frames = gather_result_frames([result], tuple(class_names), ['?' if frame_index is None else frame_index])
    data, _ = dt_columns(frames, tuple(class_names), pcd_limit_range, azimuth_range, dt_z_is_bottom,
                         resolve_box_convention(box_convention))
    return data
