"""``jit``: numba ``njit(cache=True)`` when numba imports, the plain Python function otherwise.

The decorated object keeps the Python function reachable as ``.py_func`` in both cases, so tests can
compare the compiled and the plain paths. Set ``KRADAR_EVAL_NO_NUMBA=1`` to force the plain path.
"""
import os


def _load_njit():
    if os.environ.get('KRADAR_EVAL_NO_NUMBA', '') not in ('', '0'):
        return None
    try:
        import numba
    except ImportError:
        return None
    return numba.njit


_NJIT = _load_njit()
NUMBA_AVAILABLE = _NJIT is not None


def jit(fn):
    """Compile ``fn`` in nopython mode with an on-disk cache (once per process), or return it as is."""
    if _NJIT is None:
        fn.py_func = fn
        return fn
    return _NJIT(cache=True, nogil=True)(fn)
