"""ops.rotate_iou_frames: same-frame blocks only, equal to shapely and, to rounding, to rotate_iou_eval's
full matrices; both backends; bad offsets; the numpy fallback when the numba kernel cannot compile."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.ops import frame_block_offsets, rotate_iou_eval, rotate_iou_frames
from kradar_plugin.ops.boxes import corner_offsets
from kradar_plugin.ops.frame_blocks import CORNER_BLOCK, corner_offsets_fast
from tests.ops import reference
from tests.ops.cases import CASES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKENDS = ['numpy'] + (['numba'] if importlib.util.find_spec('numba') else [])


def _frames(rng, n_frames, max_boxes=6):
    nb = rng.randint(0, max_boxes + 1, n_frames)
    nq = rng.randint(0, max_boxes + 1, n_frames)
    nb[0], nq[1] = 0, 0                                              # empty sides
    boxes = reference.random_boxes(rng, int(nb.sum()), spread=3.0)
    query = reference.random_boxes(rng, int(nq.sum()), spread=3.0)
    bo, qo = np.r_[0, np.cumsum(nb)], np.r_[0, np.cumsum(nq)]
    for f in range(n_frames):
        if nb[f] and nq[f]:
            query[qo[f]] = boxes[bo[f]]                              # an identical pair in the frame
    return boxes, query, bo, qo


@pytest.mark.parametrize('backend', BACKENDS)
@pytest.mark.parametrize('criterion', [-1, 0, 1, 2])
def test_blocks_match_shapely_and_full_matrices(backend, criterion):
    rng = np.random.RandomState(3 + criterion)
    boxes, query, bo, qo = _frames(rng, 40)
    flat = rotate_iou_frames(boxes, query, bo, qo, criterion, backend=backend)
    block_off = frame_block_offsets(bo, qo)
    assert flat.dtype == np.float64 and len(flat) == block_off[-1] == int(np.sum(np.diff(bo) * np.diff(qo)))
    for f in range(40):
        got = flat[block_off[f]:block_off[f + 1]].reshape(bo[f + 1] - bo[f], qo[f + 1] - qo[f])
        b, q = boxes[bo[f]:bo[f + 1]], query[qo[f]:qo[f + 1]]
        assert np.allclose(got, reference.overlaps(b, q, criterion), rtol=0, atol=1e-9)
        # the same kernel code as rotate_iou_eval: equal to rounding, relative to the values (criterion 2 gives
        # areas up to ~20: a full CI run saw 1.1e-16 vs 0.0, and differences of a few ulps of the larger values)
        assert np.allclose(got, rotate_iou_eval(b, q, criterion, backend=backend), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize('backend', BACKENDS)
def test_named_degenerate_cases_as_one_frame_each(backend):
    names = sorted(CASES)
    boxes = np.concatenate([np.asarray(CASES[n][0], dtype=float) for n in names])
    query = np.concatenate([np.asarray(CASES[n][1], dtype=float) for n in names])
    bo = np.r_[0, np.cumsum([len(CASES[n][0]) for n in names])]
    qo = np.r_[0, np.cumsum([len(CASES[n][1]) for n in names])]
    flat = rotate_iou_frames(boxes, query, bo, qo, -1, backend=backend)
    block_off = frame_block_offsets(bo, qo)
    for f, name in enumerate(names):
        want = reference.overlaps(CASES[name][0], CASES[name][1], -1).ravel()
        assert np.allclose(flat[block_off[f]:block_off[f + 1]], want, rtol=0, atol=1e-9), name
    assert not np.any(np.isnan(flat))


@pytest.mark.parametrize('n', [0, 5000, 2 * CORNER_BLOCK + 7])    # one block, and three
def test_corner_offsets_fast_is_bit_identical(n):
    rng = np.random.RandomState(0)
    boxes = reference.random_boxes(rng, n, spread=1e3)
    assert np.array_equal(corner_offsets_fast(boxes).view(np.int64), corner_offsets(boxes).view(np.int64))


def test_empty_and_bad_offsets():
    assert rotate_iou_frames(np.zeros((0, 5)), np.zeros((0, 5)), [0, 0, 0], [0, 0, 0]).shape == (0,)
    one = [[0, 0, 2, 2, 0]]
    assert rotate_iou_frames(one, one, [0, 1], [0, 1]).tolist() == [1.0]
    assert rotate_iou_frames(one, one, [0, 1, 1], [0, 0, 1]).tolist() == []        # different frames
    with pytest.raises(ValueError, match='boxes_off must rise from 0 to 1'):
        rotate_iou_frames(one, one, [0, 2], [0, 1])
    with pytest.raises(ValueError, match='query_off must be a 1-d integer array'):
        rotate_iou_frames(one, one, [0, 1], [0.0, 1.0])
    with pytest.raises(ValueError, match='boxes_off has 2 frames but query_off has 1'):
        rotate_iou_frames(one, one, [0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match='boxes row 0 has a NaN'):
        rotate_iou_frames([[np.nan, 0, 1, 1, 0]], one, [0, 1], [0, 1])


_BROKEN_KERNEL = r'''
import json, sys, warnings
import numba
real = numba.njit
def njit(*args, **kwargs):
    def wrap(fn):
        if fn.__name__ != 'blocks':
            return real(*args, **kwargs)(fn)
        def broken(*a):
            errors = numba.core.errors if hasattr(numba, 'core') else numba.errors  # numba < 0.49: numba.errors
            raise errors.TypingError('injected: no block kernel today')
        return broken
    return wrap
numba.njit = njit
from kradar_plugin.ops import rotate_iou_frames
from kradar_plugin.ops.numba_gate import FallbackWarning
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    a = rotate_iou_frames([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]], [0, 1], [0, 1]).tolist()
    b = rotate_iou_frames([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, 0]], [0, 1], [0, 1]).tolist()
print(json.dumps({'values': a + b, 'warnings': [str(w.message) for w in caught
                                                if issubclass(w.category, FallbackWarning)]}))
'''


def test_block_kernel_compile_failure_falls_back_to_numpy_with_one_warning():
    pytest.importorskip('numba')
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('KRADAR_IOU_BACKEND', None)
    proc = subprocess.run([sys.executable, '-c', _BROKEN_KERNEL], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out['values'] == [0.2, 1.0]                 # numpy's answers (hand values: 2 / 10 and 1)
    assert len(out['warnings']) == 1 and 'TypingError: injected: no block kernel today' in out['warnings'][0]


def test_explicit_numpy_and_unknown_backend():
    one = [[0, 0, 2, 2, 0]]
    assert rotate_iou_frames(one, [[1, 0, 2, 4, 0]], [0, 1], [0, 1], backend='numpy').tolist() == [0.2]
    with pytest.raises(ValueError, match='unknown rotated-IoU backend'):
        rotate_iou_frames(one, one, [0, 1], [0, 1], backend='gpu')
