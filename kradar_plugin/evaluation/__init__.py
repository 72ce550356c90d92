"""The K-Radar evaluator: ``kradar_eval`` (EchoFusion drop-in) and the named protocols table.

Importable with numpy alone; numba (compiled statistics) and matplotlib (plots) are optional.
"""
from .kradar_eval import (Evaluation, evaluate_annos, evaluate_protocols,  # noqa: F401
                          kradar_eval)
from .protocols import (IOU_MODES, LEGACY_DIFFERENCE_NOTE, PROTOCOL_NAMES, PROTOCOLS, Protocol,  # noqa: F401
                        get_protocol)

__all__ = ['kradar_eval', 'evaluate_annos', 'evaluate_protocols', 'Evaluation', 'PROTOCOLS', 'PROTOCOL_NAMES',
           'Protocol', 'get_protocol', 'IOU_MODES', 'LEGACY_DIFFERENCE_NOTE']
