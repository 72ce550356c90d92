"""EchoFusion infos / model results -> evaluator layout, and their evaluation (numpy only).

The hand-made boxes here are 0.17.3-style LiDAR boxes (x, y, z, l, w, h, yaw = rotation_y), so every
conversion names box_convention='mmdet3d<1.0' (the default follows the installed mmdet3d)."""
import math

import numpy as np
import pytest

from kradar_plugin.evaluation.inputs.kradar_format import info_to_gt_anno, result_to_dt_anno
from kradar_plugin.evaluation.inputs.result_io import normalize_results

from ._data import dataset_metrics

OLD = 'mmdet3d<1.0'


def _info(objs):
    """objs: (x, y, z_centre, l, w, h, yaw, name) in the radar frame -> EchoFusion info 'annos'."""
    n = len(objs)
    a = np.array([o[:7] for o in objs], dtype=float).reshape(n, 7)
    return {'annos': {
        'name': np.array([o[7] for o in objs]), 'truncated': np.zeros(n), 'occluded': np.zeros(n, int),
        'alpha': np.zeros(n), 'bbox': np.tile([50., 50, 150, 150], (n, 1)),
        'dimensions': np.c_[a[:, 4], a[:, 5], a[:, 3]],          # (w, h, l)
        'location': np.c_[-a[:, 1], -a[:, 2], a[:, 0]],           # (-y, -z, x)
        'rotation_y': a[:, 6], 'score': np.zeros(n), 'label_file': 'seq,label'}}


def _result(boxes, scores, labels, wrap=True):
    r = {'boxes_3d': np.asarray(boxes, float).reshape(-1, 7), 'scores_3d': np.asarray(scores, float),
         'labels_3d': np.asarray(labels)}
    return {'pts_bbox': r} if wrap else r


def test_info_to_gt_anno_layout_and_roi():
    info = _info([(20, 1, 0.5, 4.5, 1.8, 1.6, 0.3, 'Sedan'),
                  (20, 30, 0.5, 4.5, 1.8, 1.6, 0.0, 'Sedan'),        # outside y range
                  (10, 8.5, 0.5, 4.5, 1.8, 1.6, 0.0, 'Sedan'),       # azimuth 40 deg but y > 6.4
                  (5, 6, 0.5, 4.5, 1.8, 1.6, 0.0, 'Sedan'),          # azimuth 50.2 deg: outside
                  (30, 0, 0.5, 9.0, 2.5, 3.0, 0.0, 'Bus or Truck')])  # other class
    gt = info_to_gt_anno(info, ('Sedan',))
    assert list(gt['name']) == ['Sedan']
    assert np.allclose(gt['location'], [[1, 0.5, 20]])          # (y, z, x)
    assert np.allclose(gt['dimensions'], [[4.5, 1.6, 1.8]])     # (l, h, w)
    assert np.allclose(gt['rotation_y'], [0.3])
    assert 'label_file' not in gt
    assert info['annos']['location'][0, 0] == -1                # input untouched


def test_result_to_dt_anno_both_input_forms_and_filters():
    boxes = [[20, 1, 0.5, 4.5, 1.8, 1.6, 0.3], [80, 0, 0, 4, 2, 1.5, 0], [5, 6, 0.5, 4, 2, 1.5, 0]]
    for wrap in (True, False):
        dt = result_to_dt_anno(_result(boxes, [0.9, 0.8, 0.7], [0, 0, 0], wrap), ('Sedan',), box_convention=OLD)
        assert len(dt['name']) == 2                              # x=80 outside range; azimuth not checked
        assert np.allclose(dt['location'][0], [1, 0.5, 20]) and np.allclose(dt['dimensions'][0], [4.5, 1.6, 1.8])
        assert dt['alpha'][0] == pytest.approx(-math.atan2(-1, 20) + 0.3)
    dt = result_to_dt_anno(_result(boxes, [0.9, 0.8, 0.7], [0, 0, 0]), ('Sedan',), azimuth_range=(-50, 50),
                           box_convention=OLD)
    assert len(dt['name']) == 1
    dt = result_to_dt_anno(_result(boxes[:1], [0.9], [0]), ('Sedan',), dt_z_is_bottom=True, box_convention=OLD)
    assert dt['location'][0, 1] == pytest.approx(0.5 + 0.8)


class _Boxes(object):
    """mmdet3d-box look-alike: the values live in ``.tensor``."""

    def __init__(self, arr):
        self.tensor = np.asarray(arr, float)


def test_duck_typed_boxes_and_empty_results():
    dt = result_to_dt_anno({'boxes_3d': _Boxes([[20, 1, 0.5, 4.5, 1.8, 1.6, 0.3]]), 'scores_3d': [0.5],
                            'labels_3d': [0]}, ('Sedan',))
    assert len(dt['name']) == 1
    empty = result_to_dt_anno(_result(np.zeros((0, 7)), [], []), ('Sedan',))
    assert empty['location'].shape == (0, 3) and empty['bbox'].shape == (0, 4)


def test_bad_results_name_frame_and_field():
    with pytest.raises(ValueError, match=r'results\[3\]: scores_3d has 1 entries but boxes_3d has 2'):
        result_to_dt_anno(_result(np.ones((2, 7)), [0.5], [0, 0]), ('Sedan',), frame_index=3)
    with pytest.raises(ValueError, match=r'labels_3d\[0\] = 4 is not an index'):
        result_to_dt_anno(_result(np.ones((1, 7)), [0.5], [4]), ('Sedan',))
    with pytest.raises(ValueError, match='not finite'):
        result_to_dt_anno(_result([[np.nan, 0, 0, 1, 1, 1, 0]], [0.5], [0]), ('Sedan',))


def test_dataset_evaluation_counts_and_frame_policy():
    obj = (20, 1, 0.5, 4.5, 1.8, 1.6, 0.3, 'Sedan')
    infos = [_info([obj]), _info([])]
    good = _result([obj[:7]], [0.5], [0])
    fp = _result([[40, 0, 0.5, 4.5, 1.8, 1.6, 0.0]], [0.95], [0])
    with pytest.raises(ValueError, match='1 results for 2 infos'):
        dataset_metrics(infos, [good], ['Sedan'], box_convention=OLD)
    _, legacy = dataset_metrics(infos, [good, fp], ['Sedan'], box_convention=OLD)
    # legacy drops the GT-less frame with its false positive: 1 GT found -> 100/11
    assert legacy['kradar/Sedan_BEV_easy_strict'] == pytest.approx(100 / 11.)
    assert legacy['Sedan/3d@0.7'] == pytest.approx(100 / 11.)
    _, fixed = dataset_metrics(infos, [good, fp], ['Sedan'], protocol='fixed', box_convention=OLD)
    assert fixed['Sedan/bev@0.7'] == pytest.approx(50.0)   # the FP (0.95) ranks above the hit
    _, narrow = dataset_metrics(infos, [good, fp], ['Sedan'], protocol='fixed',
                                pcd_limit_range=(0, -6.4, -2, 30, 6.4, 6), box_convention=OLD)
    assert narrow['Sedan/bev@0.7'] == pytest.approx(100.0)  # the FP at x=40 is outside the ROI


def test_one_validation_for_both_paths():
    """normalize_results (the mixin's path) and result_to_dt_anno (the converter) report the same problems
    with the same words, naming results[i]."""
    cases = [({'boxes_3d': np.ones((2, 5)), 'scores_3d': [1, 1], 'labels_3d': [0, 0]},
              r'results\[1\]: boxes_3d must have shape \(N, 7\+\)'),
             ({'boxes_3d': np.ones((2, 7)), 'scores_3d': [1], 'labels_3d': [0, 0]},
              r'results\[1\]: scores_3d has 1 entries but boxes_3d has 2'),
             ({'boxes_3d': np.ones((1, 7)), 'scores_3d': [np.inf], 'labels_3d': [0]},
              r'results\[1\]: scores_3d\[0\] = inf is not finite'),
             ({'boxes_3d': np.ones((1, 7)), 'scores_3d': [1], 'labels_3d': [0.5]},
              r'results\[1\]: labels_3d must be integers'),
             ({'boxes': np.ones((1, 7))}, r'results\[1\]: missing')]
    ok = _result([[20, 1, 0.5, 4.5, 1.8, 1.6, 0.3]], [0.5], [0])
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            normalize_results([ok, bad])
        with pytest.raises(ValueError, match=message):
            result_to_dt_anno(bad, ('Sedan',), frame_index=1, box_convention=OLD)
    flat = normalize_results([ok, {'boxes_3d': np.zeros((0, 9)), 'scores_3d': [], 'labels_3d': []}])
    assert flat[0]['boxes_3d'].dtype == np.float64 and flat[0]['labels_3d'].dtype == np.int64
    assert flat[1]['boxes_3d'].shape == (0, 9)
