"""The K-Radar evaluator: ``kradar_eval`` (EchoFusion drop-in) and the named protocols table.

Importable with numpy alone; numba (compiled statistics) and matplotlib (plots) are optional.
"""
from .kradar_eval import Evaluation, evaluate_annos, kradar_eval  # noqa: F401
from .protocols import PROTOCOL_NAMES, PROTOCOLS, Protocol, get_protocol  # noqa: F401

__all__ = ['kradar_eval', 'evaluate_annos', 'Evaluation', 'PROTOCOLS', 'PROTOCOL_NAMES', 'Protocol',
           'get_protocol']
