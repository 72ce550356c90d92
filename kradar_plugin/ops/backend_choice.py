"""Choose the rotated-IoU backend that works here: numba-CUDA, then numba-CPU, then numpy.

A numba backend is used only after (1) the numba gate (``numba_gate``: import, version facts, a trial
compile) lets numba run at all, (2) for CUDA, the shared version facts (``kradar_plugin.facts``) find no
FAIL for the toolkit / driver, and (3) a lazy trial run on a small pair set agrees with the numpy backend.
Nothing is compiled at import. An automatic fallback warns ONCE, naming the cause and the fix (the gate's
refusal in the gate's own words, once per process); an explicitly requested backend (``backend=`` or
``KRADAR_IOU_BACKEND``) that is unavailable raises ``BackendUnavailable`` with the same text.
"""
import collections
import logging
import os
import warnings

import numpy as np

from .. import settings
from . import numba_gate
from .numba_gate import TRIAL_BOXES, FallbackWarning, describe_error, python_version

ORDER = ('cuda', 'numba', 'numpy')
logger = logging.getLogger(__name__)

Backend = collections.namedtuple('Backend', 'name intersection_areas')


class BackendUnavailable(RuntimeError):
    """A rotated-IoU backend cannot run here; ``reason`` and ``fix`` say why and what to do."""

    def __init__(self, name, reason, fix=None, quiet=False):
        self.name, self.reason, self.fix, self.quiet = name, reason, fix, quiet
        text = 'rotated-IoU backend %r unavailable: %s' % (name, reason)
        super(BackendUnavailable, self).__init__(text + ('; fix: %s' % fix if fix else ''))


_loaded = {}      # name -> Backend or BackendUnavailable
_auto = []        # the automatic choice, once made


def select(requested=None):
    """Return the Backend to use. ``requested``: None (``$KRADAR_IOU_BACKEND`` or automatic), or one
    of 'cuda', 'numba', 'numpy'."""
    name = requested or settings.raw(settings.IOU_BACKEND).lower() or None
    if name is not None:
        if name not in ORDER:
            raise ValueError('unknown rotated-IoU backend %r (from %s): choose one of %s'
                             % (name, 'backend=' if requested else settings.IOU_BACKEND, ', '.join(ORDER)))
        result = _load(name)
        if isinstance(result, BackendUnavailable):
            raise result
        return result
    if not _auto:
        _auto.append(_choose_automatically())
    return _auto[0]


def reset():
    """Forget cached choices (tests; after changing the environment variable)."""
    _loaded.clear()
    del _auto[:]


def _choose_automatically():
    skipped = []
    for name in ORDER:
        result = _load(name)
        if not isinstance(result, BackendUnavailable):
            loud = [s for s in skipped if not s.quiet]
            if loud:
                warnings.warn('kradar_plugin rotated IoU uses the %s backend: %s' % (
                    name, ' | '.join(str(s) for s in loud)), FallbackWarning, stacklevel=5)
            numba_gate.warn(stacklevel=5)    # a refusal of numba itself: the gate's one warning
            for s in skipped:
                logger.info('%s', s)
            return result
        skipped.append(result)
    raise AssertionError('the numpy backend cannot be unavailable')  # pragma: no cover


def _load(name):
    if name not in _loaded:
        try:
            _loaded[name] = globals()['_load_' + name]()
        except BackendUnavailable as exc:
            _loaded[name] = exc
    return _loaded[name]


def _load_numpy():
    from . import backend_numpy
    return Backend('numpy', backend_numpy.intersection_areas)


def _load_numba():
    gate('numba')
    try:
        from . import backend_numba_cpu
        return _trial(Backend('numba', backend_numba_cpu.intersection_areas))
    except BackendUnavailable:
        raise
    except Exception as exc:  # a broken numba install fails in many ways; report the real one
        raise BackendUnavailable('numba', describe_error(exc),
                                 'pip install --upgrade numba, or KRADAR_IOU_BACKEND=numpy')


def _load_cuda():
    numba = gate('cuda')
    simulated = os.environ.get('NUMBA_ENABLE_CUDASIM') == '1'
    if not simulated:
        driver = nvidia_driver_version()
        if driver is None:
            raise BackendUnavailable('cuda', 'no NVIDIA driver found', quiet=True)
        from .. import facts
        toolkit = _cuda_toolkit_version()
        refuse_on_fail('cuda', facts.numba_cuda_findings(numba.__version__, np.__version__, toolkit,
                                                           driver, python_version()))
    try:
        from numba import cuda
        if not cuda.is_available():
            raise BackendUnavailable('cuda', 'numba finds no usable CUDA GPU (numba.cuda.is_available() is False)',
                                     'check `nvidia-smi` and `python -m numba -s`')
        from . import backend_numba_cuda
        return _trial(Backend('cuda', backend_numba_cuda.intersection_areas))
    except BackendUnavailable:
        raise
    except Exception as exc:  # NvvmError, NvvmSupportError, CudaSupportError, LinkerError, ...
        raise BackendUnavailable('cuda', describe_error(exc),
                                 'run `kradar-doctor --compile-test` for the version pair to change')


def gate(name):
    """numba when the numba gate lets it run, else raise ``BackendUnavailable(name)``, quiet: the gate says
    its refusal itself (``numba_gate.warn``)."""
    refused = numba_gate.refusal()
    if refused is not None:
        raise BackendUnavailable(name, refused.reason, refused.fix, quiet=True)
    return numba_gate.module()


def refuse_on_fail(name, findings):
    fails = [f for f in findings if f.status == 'FAIL']
    if fails:
        raise BackendUnavailable(name, '; '.join(f.reason for f in fails), '; '.join(f.fix for f in fails if f.fix))


def _trial(backend):
    """Run the backend on a small set and compare with numpy; a wrong answer is a failure too."""
    from . import backend_numpy
    got = backend.intersection_areas(TRIAL_BOXES, TRIAL_BOXES[::-1].copy())
    want = backend_numpy.intersection_areas(TRIAL_BOXES, TRIAL_BOXES[::-1].copy())
    if got.shape != want.shape or not np.allclose(got, want, rtol=0, atol=1e-9):
        raise BackendUnavailable(backend.name, 'trial run disagrees with the numpy reference (max error %.3g)'
                                 % float(np.abs(got - want).max()), 'report this; use KRADAR_IOU_BACKEND=numpy')
    return backend


def nvidia_driver_version():
    """The NVIDIA driver version without loading CUDA; None without a driver."""
    from ..facts.nvidia_driver import driver_version
    return driver_version()


def _cuda_toolkit_version():
    """The CUDA toolkit numba will compile with, as 'major.minor', or None when it cannot tell."""
    try:
        from numba.cuda.cudadrv.runtime import runtime
        major, minor = runtime.get_version()
        return '%d.%d' % (major, minor)
    except Exception as exc:  # no cudart: numba may still find libNVVM; the trial compile decides
        logger.debug('CUDA runtime version unknown: %s', exc)
        return None
