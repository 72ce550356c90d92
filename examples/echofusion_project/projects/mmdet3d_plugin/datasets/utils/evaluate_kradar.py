"""The project's K-Radar evaluator: KITTI-style 11-point AP at IoU 0.3 / 0.5 / 0.7 with EchoFusion's metric
keys, computed by mmdet3d's own KITTI evaluation core (``mmdet3d.core.evaluation.kitti_utils.eval``).

K-Radar classes are renamed to the KITTI classes whose rules they share (``Sedan`` -> ``Car`` with
``Bus or Truck`` -> ``Van`` ignored for it, ``Pedestrian`` with ``Person_sitting`` ignored, ``Bicycle`` ->
``Cyclist``), so mmdet3d's ``clean_data`` applies EchoFusion's rules. Its BEV/3D overlaps import mmdet3d's
``rotate_iou`` (numba CUDA) when first used, as EchoFusion's evaluator does.
"""
import numpy as np

from mmdet3d.core.evaluation.kitti_utils.eval import do_eval

# K-Radar name -> (KITTI name, KITTI class index in mmdet3d's clean_data or None for an ignored-only class)
_TO_KITTI = {'Sedan': ('Car', 0), 'Bus or Truck': ('Van', None), 'Pedestrian': ('Pedestrian', 1),
             'Person_sitting': ('Person_sitting', None), 'Bicycle': ('Cyclist', 2), 'DontCare': ('DontCare', None)}
_IOU_MODES = {'all': (0.3, 0.5, 0.7), 'easy': (0.3,), 'mod': (0.5,), 'hard': (0.7,)}
_DIFFICULTIES = ('easy', 'moderate', 'hard')


def _kitti_names(annos):
    out = []
    for anno in annos:
        anno = dict(anno)
        anno['name'] = np.array([_TO_KITTI.get(str(n), ('Other', None))[0] for n in anno['name']])
        out.append(anno)
    return out


def kradar_eval(gt_annos, dt_annos, current_classes, iou_mode='all', eval_types=('bev', '3d')):
    """(result string, {'kradar/<Class>_<3D|BEV|2D>_<difficulty>_<strict|loose>': AP}) like EchoFusion's."""
    classes = [current_classes] if isinstance(current_classes, str) else list(current_classes)
    for cls in classes:
        if _TO_KITTI.get(cls, (None, None))[1] is None:
            raise ValueError('this evaluator supports the classes {}, got {!r}'.format(
                [k for k, v in _TO_KITTI.items() if v[1] is not None], cls))
    ious = _IOU_MODES[iou_mode]
    kitti_index = [_TO_KITTI[c][1] for c in classes]
    # [threshold, metric (bbox, bev, 3d), class position]
    min_overlaps = np.zeros((len(ious), 3, len(classes)))
    for i, iou in enumerate(ious):
        min_overlaps[i] = iou
    eval_types = list(eval_types)
    pred_alpha = any(np.any(np.asarray(a['alpha']) != -10) for a in dt_annos)
    gt_alpha = any(len(a['alpha']) and a['alpha'][0] != -10 for a in gt_annos)
    if pred_alpha and gt_alpha and 'bbox' in eval_types:
        eval_types.append('aos')
    map_bbox, map_bev, map_3d, map_aos = do_eval(_kitti_names(gt_annos), _kitti_names(dt_annos), kitti_index,
                                                 min_overlaps, eval_types)[:4]
    lines, ap_dict = [], {}
    for j, cls in enumerate(classes):
        for i, iou in enumerate(ious):
            lines.append('{} AP@{:.2f}, {:.2f}, {:.2f}:'.format(cls, iou, iou, iou))
            for label, values in (('bbox', map_bbox), ('bev ', map_bev), ('3d  ', map_3d), ('aos ', map_aos)):
                if values is not None:
                    lines.append('{} AP:{:.4f}, {:.4f}, {:.4f}'.format(label, *values[j, :, i]))
            for d, difficulty in enumerate(_DIFFICULTIES):
                postfix = '{}_{}'.format(difficulty, 'strict' if i == 0 else 'loose')
                for key, values in (('3D', map_3d), ('BEV', map_bev), ('2D', map_bbox)):
                    if values is not None:
                        ap_dict['kradar/{}_{}_{}'.format(cls, key, postfix)] = float(values[j, d, i])
    return '\n'.join(lines) + '\n', ap_dict
