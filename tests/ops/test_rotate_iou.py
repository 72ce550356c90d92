"""rotate_iou_eval against shapely (independent corners) on every CPU backend; API contract."""
import math

import numpy as np
import pytest

from kradar_plugin.ops import rotate_iou_eval, rotate_iou_gpu_eval
from tests.ops import reference
from tests.ops.cases import CASES, as_arrays

CPU_BACKENDS = ['numpy', 'numba']
CRITERIA = (-1, 0, 1, 2)
TOL = 1e-6


@pytest.fixture(params=CPU_BACKENDS)
def backend(request):
    if request.param == 'numba':
        pytest.importorskip('numba')
    return request.param


@pytest.mark.parametrize('criterion', CRITERIA)
def test_random_boxes_match_shapely(backend, criterion):
    rng = np.random.RandomState(criterion + 10)
    boxes, query = reference.random_boxes(rng, 120), reference.random_boxes(rng, 90)
    got = rotate_iou_eval(boxes, query, criterion, backend=backend)
    want = reference.overlaps(boxes, query, criterion)
    assert got.shape == (120, 90) and got.dtype == np.float64
    assert np.abs(got - want).max() <= TOL
    assert (want > 0).mean() > 0.1  # the random set really overlaps


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('criterion', CRITERIA)
def test_named_cases_match_shapely(backend, name, criterion):
    boxes, query = as_arrays(name)
    got = rotate_iou_eval(boxes, query, criterion, backend=backend)
    want = reference.overlaps(boxes, query, criterion)
    assert np.isfinite(got).all()
    assert np.abs(got - want).max() <= TOL, (got, want)


def test_identical_rotated_boxes_are_exactly_one(backend):
    boxes, _ = as_arrays('identical_many_angles')
    iou = rotate_iou_eval(boxes, boxes, backend=backend)
    np.testing.assert_allclose(np.diag(iou), 1.0, rtol=0, atol=1e-12)
    single = rotate_iou_eval([[1, 1, 1, 1, 0.3]], [[1, 1, 1, 1, 0.3]], backend=backend)
    assert abs(single[0, 0] - 1.0) <= 1e-12


def test_quarter_turn_is_the_same_rectangle(backend):
    # A 4x2 box turned by pi/2 covers exactly the 2x4 box (the reference kernel gives 0.6 here).
    boxes, query = as_arrays('same_box_quarter_turn')
    assert abs(rotate_iou_eval(boxes, query, backend=backend)[0, 0] - 1.0) <= 1e-12


def test_degenerate_boxes_give_zero_not_nan(backend):
    for name in ('zero_width', 'zero_height_both', 'zero_size_point'):
        boxes, query = as_arrays(name)
        for criterion in CRITERIA:
            got = rotate_iou_eval(boxes, query, criterion, backend=backend)
            assert np.isfinite(got).all() and (got == 0).all(), (name, criterion, got)


def test_documented_reference_values(backend):
    # rotate-iou.md: a=[0,0,2,2,0] as boxes, b=[1,0,2,4,0] as query: -1->0.2, 0->0.25, 1->0.5, 2->2.0.
    # By hand: the overlap is x in [0, 1], y in [-1, 1] = 2; areas 4 and 8; IoU 2 / (4 + 8 - 2).
    a, b = [[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]]
    for criterion, want in ((-1, 0.2), (0, 0.25), (1, 0.5), (2, 2.0)):
        assert abs(rotate_iou_eval(a, b, criterion, backend=backend)[0, 0] - want) <= 1e-12


def test_octagon_by_hand(backend):
    # A 2x2 square and the same square turned by 45 degrees: a regular octagon of apothem 1,
    # area 8 (sqrt(2) - 1); IoU = area / (8 - area).
    boxes, query = as_arrays('octagon')
    octagon = 8 * (math.sqrt(2) - 1)
    assert abs(rotate_iou_eval(boxes, query, 2, backend=backend)[0, 0] - octagon) <= 1e-12
    assert abs(rotate_iou_eval(boxes, query, backend=backend)[0, 0] - octagon / (8 - octagon)) <= 1e-12


def test_empty_inputs_give_zeros_of_shape(backend):
    box = [[0, 0, 1, 1, 0]]
    assert rotate_iou_eval(np.zeros((0, 5)), box, backend=backend).shape == (0, 1)
    assert rotate_iou_eval(box, np.zeros((0, 5)), backend=backend).shape == (1, 0)
    assert rotate_iou_eval(np.zeros((0, 5)), np.zeros((0, 5)), backend=backend).shape == (0, 0)


def test_integer_and_float16_inputs_are_accepted(backend):
    ints = np.array([[0, 0, 2, 2, 0]], dtype=np.int32)
    halves = np.array([[1, 0, 2, 4, 0]], dtype=np.float16)
    assert abs(rotate_iou_eval(ints, halves, backend=backend)[0, 0] - 0.2) <= 1e-12


def test_gpu_eval_name_is_a_drop_in():
    a, b = [[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]]
    assert abs(rotate_iou_gpu_eval(a, b)[0, 0] - 0.2) <= 1e-12
    assert abs(rotate_iou_gpu_eval(a, b, 0, device_id=0)[0, 0] - 0.25) <= 1e-12
    assert abs(rotate_iou_gpu_eval(np.asarray(a, np.float32), np.asarray(b, np.float32), criterion=1)[0, 0]
               - 0.5) <= 1e-12


def test_backends_agree_on_large_random_sets():
    pytest.importorskip('numba')
    rng = np.random.RandomState(7)
    boxes, query = reference.random_boxes(rng, 700, spread=20), reference.random_boxes(rng, 500, spread=20)
    a = rotate_iou_eval(boxes, query, backend='numpy')
    b = rotate_iou_eval(boxes, query, backend='numba')
    assert np.abs(a - b).max() <= 1e-12
