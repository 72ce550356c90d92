"""Bad input: a ValueError that names the argument and the first bad row."""
import numpy as np
import pytest

from kradar_plugin.ops import rotate_iou_eval

GOOD = [[0, 0, 1, 1, 0]]


@pytest.mark.parametrize('bad, shape', [
    (np.zeros((3, 4)), r'\(3, 4\)'), (np.zeros(5), r'\(5,\)'), (np.zeros((2, 5, 1)), r'\(2, 5, 1\)')])
def test_wrong_shape_names_argument_and_shape(bad, shape):
    with pytest.raises(ValueError, match=r'boxes must have shape \(N, 5\).*' + shape):
        rotate_iou_eval(bad, GOOD)
    with pytest.raises(ValueError, match=r'query_boxes must have shape \(N, 5\).*' + shape):
        rotate_iou_eval(GOOD, bad)


@pytest.mark.parametrize('value', [np.nan, np.inf, -np.inf])
def test_non_finite_names_first_bad_row(value):
    boxes = np.ones((4, 5))
    boxes[2, 1] = value
    boxes[3, 0] = value
    with pytest.raises(ValueError, match=r'^query_boxes row 2 has a NaN or infinite value'):
        rotate_iou_eval(GOOD, boxes)


def test_negative_size_names_row():
    boxes = np.ones((3, 5))
    boxes[1, 3] = -2
    with pytest.raises(ValueError, match=r'^boxes row 1 has a negative width or height'):
        rotate_iou_eval(boxes, GOOD)


@pytest.mark.parametrize('criterion', [3, -2, 0.5, True, 'iou'])
def test_unknown_criterion(criterion):
    with pytest.raises(ValueError, match='criterion must be one of'):
        rotate_iou_eval(GOOD, GOOD, criterion)


def test_non_numeric():
    with pytest.raises(ValueError, match='boxes must be a numeric array'):
        rotate_iou_eval([['a', 'b', 'c', 'd', 'e']], GOOD)
