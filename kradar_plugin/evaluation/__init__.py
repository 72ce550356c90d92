"""The K-Radar evaluator: :class:`KRadarEvaluator` (the one object every path uses), ``kradar_eval``
(EchoFusion's drop-in function) and the named protocols table.

The pipeline, in order, with its intermediate types:

1. inputs -- EchoFusion infos and model results (``inputs.kradar_columns``: ``gather_infos`` /
   ``gather_result_frames`` -> ``Converted``), or annotation lists (``validation.check_side`` ->
   ``validation.CheckedSide``), or K-Radar's own folders (``kradar_plugin.files``);
2. ``frames.Frames`` -- both sides checked and concatenated (``engine.prepare`` -> ``engine.Prepared``, with
   its pair index, score order and cached overlaps);
3. ``matching.CurvePlan`` / ``matching.Task`` -- which curves a protocol computes; the matching kernel's
   events (``statistics``), run once per protocol into an ``engine.EventTable``;
4. :class:`Evaluation` -- AP per metric, class, column and IoU of a selection of the table's frames: all of
   them (the pooled AP), or a condition group, user group or bootstrap draw (``grouped.groups_at``), at each
   confidence threshold;
5. reports -- flat metric dicts, tables (``report``, ``tables``), JSON, plots.

Importable with numpy alone; numba (compiled statistics) and matplotlib (plots) are optional.
"""
from .engine import Evaluation
from .evaluator import KRadarEvaluator
from .kradar_eval import kradar_eval
from .protocols import IOU_MODES, LEGACY_DIFFERENCE_NOTE, PROTOCOL_NAMES, PROTOCOLS, Protocol, get_protocol

__all__ = ['KRadarEvaluator', 'kradar_eval', 'Evaluation', 'PROTOCOLS', 'PROTOCOL_NAMES', 'Protocol', 'get_protocol',
           'IOU_MODES', 'LEGACY_DIFFERENCE_NOTE']
