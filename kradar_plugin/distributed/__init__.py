"""What the mmcv 1.x runner adapter (``adapters.mmcv1``) and the mmengine one (``adapters.mmengine``) share:
the eval-only switch's settings, ``dist_params`` normalisation, the exact-collection checks, the fail-fast
report and the guard helpers around an evaluation.

Framework-free at import (standard library and numpy only; torch is imported inside the functions that
need a process group), so either adapter, the doctor and the tests can import it on any stack.
"""
