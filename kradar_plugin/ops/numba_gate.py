"""The one numba decision of the process: may kradar_plugin's numba kernels run here?

Asked by the rotated-IoU backends (numba-CPU and numba-CUDA), the frame-block kernel and the evaluator's
kernels, so that they all agree. numba is used only when (1) it imports, (2) the shared version facts
(``kradar_plugin.facts``) find no FAIL for this numba / numpy / Python, and (3) a trial compiles the
frame-block kernel (small, and the one every evaluation runs) and agrees with numpy on a few boxes.
Decided once per process, on first use (nothing compiles at import). A refusal is said ONCE per process
(:func:`warn`, called by whoever falls back first) as a ``NumbaFallbackWarning``; numba simply not
installed is not a refusal worth a warning here (the evaluator advises it in its own words).
"""
import collections
import sys
import warnings

import numpy as np

from .. import settings


class FallbackWarning(RuntimeWarning):
    """A numba path (CPU or CUDA) that should have worked was skipped; said once per cause."""


class NumbaFallbackWarning(FallbackWarning):
    """numba is not used here: the overlaps use numpy, the evaluator's kernels run as plain Python."""


Refusal = collections.namedtuple('Refusal', 'reason fix absent')

#: boxes of every trial run (the frame-block kernel here, the IoU backends in ``backend_choice``)
TRIAL_BOXES = np.array([[0.0, 0.0, 2.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.3], [0.5, -0.5, 4.0, 2.0, 1.5707963267948966]])

_STATE = {}   # 'numba' and 'kernel' once allowed, or 'refusal'; 'warned' once said


def module():
    """numba when it may run here, else None (see :func:`refusal`)."""
    _decide()
    return _STATE.get('numba')


def frame_kernel():
    """The compiled frame-block kernel (``_frame_blocks_numba.blocks``) when numba may run here, else None."""
    _decide()
    return _STATE.get('kernel')


def refusal():
    """Why numba may not run here (a ``Refusal``: reason, fix, absent = simply not installed), or None."""
    _decide()
    return _STATE.get('refusal')


def warn(stacklevel=2):
    """Say ONCE per process why numba is not used; nothing when it is, when it is simply not installed, or
    before the decision. ``stacklevel`` as for ``warnings.warn``, counted from the caller."""
    refused = _STATE.get('refusal')
    if refused is None or refused.absent or _STATE.get('warned'):
        return
    _STATE['warned'] = True
    warnings.warn("kradar_plugin uses no numba here (rotated IoU: the numpy backend; the evaluator's kernels: "
                  'plain Python; same numbers, slower): {}; fix: {}, or set {}=numpy and {}=1 to choose this '
                  'silently'.format(refused.reason, refused.fix, settings.IOU_BACKEND, settings.EVAL_NO_NUMBA),
                  NumbaFallbackWarning, stacklevel=stacklevel + 1)


def _decide():
    if _STATE:
        return
    try:
        import numba
    except Exception as exc:  # noqa: BLE001 - ImportError, or a numba that breaks on import
        absent = isinstance(exc, ImportError) and getattr(exc, 'name', None) == 'numba'
        _STATE['refusal'] = Refusal('numba is not importable ({})'.format(describe_error(exc)),
                                    'pip install numba' if absent else 'pip install --upgrade numba', absent)
        return
    from .. import facts
    fails = [f for f in facts.numba_cpu_findings(numba.__version__, np.__version__, python_version())
             if f.status == 'FAIL']
    if fails:
        _STATE['refusal'] = Refusal('; '.join(f.reason for f in fails), '; '.join(f.fix for f in fails if f.fix),
                                    False)
        return
    try:
        from . import _frame_blocks_numba
        kernel = _frame_blocks_numba.blocks
        _trial(kernel)
    except Exception as exc:  # noqa: BLE001 - a compile error of any kind: report it, use numpy
        _STATE['refusal'] = Refusal('compiling the frame-block kernel failed: ' + describe_error(exc),
                                    'pip install --upgrade numba', False)
        return
    _STATE.update(numba=numba, kernel=kernel)


def _trial(kernel):
    """Run the kernel on two frames of ``TRIAL_BOXES`` (intersection areas) and compare with numpy."""
    from .backend_numpy import intersection_areas
    from .boxes import corner_offsets
    boxes = TRIAL_BOXES
    off = np.array([0, 2, 3], dtype=np.int64)
    block_off = np.array([0, 4, 5], dtype=np.int64)
    got = np.zeros(5)
    radius = 0.5 * np.hypot(boxes[:, 2], boxes[:, 3])
    kernel(boxes, np.ascontiguousarray(corner_offsets(boxes)), radius, boxes, np.cos(boxes[:, 4]),
           np.sin(boxes[:, 4]), radius, off, off, block_off, 2, got)
    want = np.concatenate([intersection_areas(boxes[:2], boxes[:2]).ravel(),
                           intersection_areas(boxes[2:], boxes[2:]).ravel()])
    if not np.allclose(got, want, rtol=0, atol=1e-9):
        raise RuntimeError('the numba block kernel disagrees with numpy on the trial boxes')


def describe_error(exc):
    """'TypeName: first non-empty line of the message'."""
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return '{}: {}'.format(type(exc).__name__, lines[0].strip() if lines else '')


def python_version():
    return '%d.%d.%d' % sys.version_info[:3]
