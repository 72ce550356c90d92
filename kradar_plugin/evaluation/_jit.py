"""Optional numba for the evaluator's kernels: compiled when numba works, plain Python otherwise.

``@jit`` registers a kernel and returns the plain Python function unchanged, so importing the evaluator
never imports numba. Python code calls kernels through :func:`call` (``_jit.call(kernel, *args)``). On
the first call the mode is decided once per process:

* ``KRADAR_EVAL_NO_NUMBA=1``: plain Python, quietly (your choice);
* numba not installed: plain Python, ONE ``NumbaFallbackWarning`` saying so and that ``pip install numba``
  makes large sets faster (``kradar-eval`` turns it into one note, for large sets only);
* numba refused by the numba gate (``ops.numba_gate``: broken import, a numba / numpy / Python pair the
  version facts refuse, a failed trial compile): plain Python, with the gate's ONE warning for the process;
* otherwise every registered kernel is replaced, in its module, by ``numba.njit(cache=True, nogil=True)``
  of itself (kernels call each other through module globals, so compiled code calls compiled code).

Each entry kernel is compiled explicitly for its argument types before it runs; if compiling fails (a
numba too old for some construct, a broken LLVM, ...), every kernel goes back to its plain Python
function, ONE ``NumbaFallbackWarning`` names the error, and the call runs plain: same numbers, slower.
Errors raised while a compiled kernel runs are not compile failures and propagate.
"""
import warnings

from .. import settings
from ..ops import numba_gate
from ..ops.numba_gate import NumbaFallbackWarning, describe_error


_KERNELS = []          # (module globals, name, python function), in registration order
_STATE = {'mode': None, 'reason': None, 'numba': None, 'errors': (), 'compiled': {}}


def jit(fn):
    """Register ``fn`` as a kernel; returns ``fn`` itself (compiled lazily by :func:`call`)."""
    _KERNELS.append((fn.__globals__, fn.__name__, fn))
    fn.py_func = fn
    return fn


def mode():
    """('numba' | 'plain', reason or None), deciding it now if no kernel has run yet."""
    if _STATE['mode'] is None:
        _decide()
    return _STATE['mode'], _STATE['reason']


def call(kernel, *args):
    """Run a registered kernel (its Python function or its dispatcher) compiled when possible."""
    kernel = getattr(kernel, 'py_func', kernel)
    if mode()[0] == 'plain':
        return kernel(*args)
    dispatcher = kernel.__globals__[kernel.__name__]
    if kernel.__name__ in _STATE['compiled']:
        # compiled before: a new argument type would compile on the fly, and fail with a NumbaError
        try:
            return dispatcher(*args)
        except _STATE['errors'] as exc:
            _fall_back('compiling {} failed: {}'.format(kernel.__name__, describe_error(exc)))
            return kernel(*args)
    numba = _STATE['numba']
    try:
        dispatcher.compile(tuple(numba.typeof(a) for a in args))
    except Exception as exc:  # noqa: BLE001 - any compile failure: plain Python, said once
        _fall_back('compiling {} failed: {}'.format(kernel.__name__, describe_error(exc)))
        return kernel(*args)
    _STATE['compiled'][kernel.__name__] = True
    return dispatcher(*args)


def _decide():
    if settings.enabled(settings.EVAL_NO_NUMBA):
        _STATE.update(mode='plain', reason='{}={}'.format(settings.EVAL_NO_NUMBA, settings.raw(settings.EVAL_NO_NUMBA)))
        return
    refused = numba_gate.refusal()
    if refused is not None:
        # not installed (numba is optional) is no broken install: the warning says so and advises no fix
        _STATE['absent'] = refused.absent
        if refused.absent:
            _fall_back(refused.reason)
        else:
            _plain(refused.reason)
            numba_gate.warn(stacklevel=3)      # the gate's one warning for the process, not a second one
        return
    numba = _STATE['numba'] = numba_gate.module()
    core = getattr(numba, 'core', None)
    _STATE['errors'] = (core.errors if core is not None and hasattr(core, 'errors') else numba.errors).NumbaError
    try:
        for module_globals, name, fn in _KERNELS:
            module_globals[name] = numba.njit(cache=True, nogil=True)(fn)
    except Exception as exc:  # noqa: BLE001
        _fall_back('numba.njit failed: {}'.format(describe_error(exc)))
        return
    _STATE.update(mode='numba', reason=None)


def _plain(reason, mode='plain'):
    for module_globals, name, fn in _KERNELS:
        module_globals[name] = fn
    _STATE.update(mode=mode, reason=reason, compiled={})


def _fall_back(reason):
    _plain(reason)
    advice = ('pip install numba makes large sets faster' if _STATE.get('absent') else
              'fix numba (pip install --upgrade numba)')
    warnings.warn('kradar_plugin evaluator runs its kernels as plain Python (same numbers, much slower on '
                  'large sets): {}. {}, or set {}=1 to choose the plain path silently.'.format(
                      reason, advice[0].upper() + advice[1:], settings.EVAL_NO_NUMBA), NumbaFallbackWarning,
                  stacklevel=4)


def numba_absent():
    """Whether the kernels run as plain Python because numba is not installed (not because it is broken)."""
    return _STATE['mode'] == 'plain' and bool(_STATE.get('absent'))


def reset():
    """Forget the decision (tests): kernels become plain functions until the next :func:`call`."""
    _plain(None, mode=None)
    _STATE.update(numba=None, absent=False)
