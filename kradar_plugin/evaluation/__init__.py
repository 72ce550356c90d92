"""The K-Radar evaluator: :class:`KRadarEvaluator` (the one object every path uses), ``kradar_eval``
(EchoFusion's drop-in function) and the named protocols table.

The pipeline, in order, with its intermediate types:

1. inputs -- EchoFusion infos and model results (``inputs.kradar_columns``: ``gather_infos`` /
   ``gather_result_frames`` -> ``Converted``), or annotation lists (``validation.check_side`` ->
   ``validation.CheckedSide``), or K-Radar's own folders (``kradar_plugin.files``);
2. :class:`~.evaluator.SideSet` -- GT, detections, a second model, condition rows, per protocol;
3. ``frames.Frames`` -- both sides checked and concatenated (``kradar_eval.prepare`` -> a prepared set with
   its pair index, score order and cached overlaps);
4. ``matching.CurvePlan`` / ``matching.Task`` -- which curves a protocol computes; the matching kernel's
   events (``statistics``), read pooled (``kradar_eval``) or per group (``event_table.EventTable``);
5. :class:`Evaluation` -- AP per metric, class, column and IoU; ``grouped.Grouped`` -- per condition group,
   threshold and bootstrap draw;
6. reports -- flat metric dicts, tables (``report``, ``tables``), JSON, plots.

Importable with numpy alone; numba (compiled statistics) and matplotlib (plots) are optional.
"""
from .evaluator import KRadarEvaluator, SideSet
from .kradar_eval import Evaluation, evaluate_annos, evaluate_protocols, kradar_eval
from .protocols import IOU_MODES, LEGACY_DIFFERENCE_NOTE, PROTOCOL_NAMES, PROTOCOLS, Protocol, get_protocol

__all__ = ['KRadarEvaluator', 'SideSet', 'kradar_eval', 'evaluate_annos', 'evaluate_protocols', 'Evaluation',
           'PROTOCOLS', 'PROTOCOL_NAMES', 'Protocol', 'get_protocol', 'IOU_MODES', 'LEGACY_DIFFERENCE_NOTE']
