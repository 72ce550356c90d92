"""``kradar_eval``: drop-in for EchoFusion's ``kradar_eval`` with a ``protocol`` argument, returning
``(result_str, ap_dict)`` like EchoFusion's function; the work is the evaluation engine's (``engine``)."""
from .engine import EventTable, prepare
from .protocols import get_protocol
from .validation import check_eval_types, resolve_classes

#: EchoFusion's ``kradar_eval`` default ``eval_types``: BEV and 3D (a tuple here: never mutated)
ECHOFUSION_EVAL_TYPES = ('bev', '3d')


def kradar_eval(gt_annos, dt_annos, current_classes, iou_mode='all', eval_types=ECHOFUSION_EVAL_TYPES, *,
                protocol='legacy', **protocol_overrides):
    """K-Radar evaluation of per-frame annotation dicts; returns ``(result_str, ap_dict)``.

    The first five parameters are EchoFusion's ``kradar_eval(gt_annos, dt_annos, current_classes,
    iou_mode='all', eval_types=['bev', '3d'])``, positional or keyword: ``iou_mode`` 'all' evaluates the
    protocol's IoU thresholds (0.3, 0.5, 0.7), 'easy' / 'mod' / 'hard' only 0.3 / 0.5 / 0.7;
    ``eval_types`` from 'bbox', 'bev', '3d' ('aos' needs 'bbox'; AOS is computed with 'bbox' when the
    alphas are valid, as in EchoFusion) and is never modified. Keyword only: ``protocol``: 'legacy'
    (EchoFusion's numbers and key names, with a correct IoU), 'kradar' (K-Radar's eval.py), 'revised' or
    'fixed' (see ``protocols.PROTOCOLS``), or a :class:`Protocol`; ``protocol_overrides`` replace single settings,
    e.g. ``distance_edges=(0, 20, 40, 72)``. Every given frame is evaluated (detections in a frame without
    GT are false positives); dropping frames is the dataset step's business.
    """
    proto = get_protocol(protocol, iou_mode=iou_mode, **protocol_overrides)
    prepared = prepare(gt_annos, dt_annos, [proto], eval_types)
    table = EventTable(proto, prepared, resolve_classes(current_classes), check_eval_types(eval_types),
                       frame_rule=False)
    result = table.match(keep=False)[0]
    return result.result_str, result.ap_dict
