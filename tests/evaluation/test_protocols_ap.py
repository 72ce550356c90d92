"""The protocol table and the AP building blocks."""
import math

import numpy as np
import pytest

from kradar_plugin.evaluation import PROTOCOLS, PROTOCOL_NAMES, get_protocol
from kradar_plugin.evaluation import ap


def test_table_settings():
    assert PROTOCOL_NAMES == ('legacy', 'kradar', '4drmr', 'revised', 'fixed')
    legacy, kradar, drmr, revised, fixed = (PROTOCOLS[n] for n in PROTOCOL_NAMES)
    # 4DR-MR's eval.py: K-Radar's eval.py with z_center 0.5 (still 11 of 41 points, unlike eval_revised.py)
    assert drmr.replace(name='kradar', description=kradar.description, z_center=1.0) == kradar
    assert (drmr.interpolation, drmr.z_center) == ('11of41', 0.5)
    # K-Radar's eval.py: legacy's geometry and interpolation without EchoFusion's ignored neighbour class
    assert kradar.replace(name='legacy', description=legacy.description, similar_classes=legacy.similar_classes,
                          echofusion_keys=True) == legacy and kradar.similar_classes == ()
    assert (legacy.interpolation, revised.interpolation, fixed.interpolation) == ('11of41', 'all41', 'r40')
    assert (legacy.z_center, revised.z_center, fixed.z_center) == (1.0, 0.5, 0.5)
    assert legacy.yaw_offset == 0.0 and fixed.yaw_offset == -math.pi / 2
    assert legacy.drop_frames_without_gt and not fixed.drop_frames_without_gt
    assert fixed.column_labels() == ('all', '0-30m', '30-50m', '50-72m')
    assert legacy.column_labels() == ('easy', 'moderate', 'hard')
    assert get_protocol('fixed', distance_edges=(0, 40, 80)).column_labels() == ('all', '0-40m', '40-80m')
    with pytest.raises(ValueError):
        get_protocol('fixed', distance_edges=(30, 10))
    with pytest.raises(AttributeError):
        legacy.z_center = 0.5
    echofusion_rules = (('Sedan', 'Bus or Truck'), ('Pedestrian', 'Person_sitting'))
    assert legacy.similar_classes == fixed.similar_classes == echofusion_rules and revised.similar_classes == ()
    assert get_protocol('legacy', iou_mode='hard').iou_thresholds == (0.7,)
    assert get_protocol('revised', iou_mode='easy').iou_thresholds == (0.3,)
    assert get_protocol('fixed', iou_mode='all').iou_thresholds == (0.3, 0.5, 0.7)


def test_get_thresholds_hand_cases():
    # 2 GT, 2 TP scores: both kept (fewer thresholds than the 41 sample points)
    assert list(ap.get_thresholds([0.7, 0.9], 2)) == [0.9, 0.7]
    # 80 GT, 80 TP: recall steps of 1/80, sample points every 1/40 -> every other score, 41 in all
    scores = np.linspace(1, 0.01, 80)
    thr = ap.get_thresholds(scores, 80)
    assert len(thr) == 41 and thr[0] == scores[0] and thr[-1] == scores[-1]
    assert len(ap.get_thresholds([], 0)) == 0


def test_interpolations_by_hand():
    p41 = ap.precision_at_sample_points([0.5, 1.0])
    assert list(p41[:3]) == [1.0, 1.0, 0.0]
    assert ap.ap_11_of_41(p41) == pytest.approx(100 / 11.)
    assert ap.ap_all_41(p41) == pytest.approx(200 / 41.)
    # operating points (R, P): (0.5, 1), (1.0, 0.5) -> R40: 20 positions at 1, 20 at 0.5
    assert ap.curve_ap('r40', [0.5, 1.0], [1.0, 0.5], [1.0, 0.5], None, False)[0] == pytest.approx(75.0)
    assert ap.curve_ap('r40', [], [], [], None, False)[0] == 0.0
    assert list(ap.ratios([1, 0], [0, 0])) == [0.0, 0.0]


def _kitti_thresholds_loop(scores, num_gt, num_sample_pts=41):
    """The legacy evaluators' get_thresholds, written out as their loop (independent of ap.py)."""
    scores = sorted(scores, reverse=True)
    current, out = 0, []
    for i, score in enumerate(scores):
        l_recall = (i + 1) / num_gt
        r_recall = (i + 2) / num_gt if i < len(scores) - 1 else l_recall
        if (r_recall - current) < (current - l_recall) and i < len(scores) - 1:
            continue
        out.append(score)
        current += 1 / (num_sample_pts - 1.0)
    return out


@pytest.mark.parametrize('n_tp,num_gt', [(1, 1), (2, 2), (3, 10), (40, 40), (80, 80), (79, 80), (120, 120),
                                         (400, 400), (399, 1200), (1000, 1000), (5000, 7000), (20000, 20000)])
def test_get_thresholds_equals_the_legacy_loop(n_tp, num_gt):
    rs = np.random.RandomState(n_tp)
    scores = np.round(rs.uniform(0, 1, n_tp), 3)        # repeated values too
    want = _kitti_thresholds_loop(list(scores), num_gt)
    got = ap.get_thresholds(scores, num_gt)
    assert list(got) == want


def test_eval_threads_setting_is_checked(monkeypatch):
    """KRADAR_EVAL_THREADS: a positive integer; 'abc' and '0' are errors naming the variable."""
    from kradar_plugin.evaluation import matching
    monkeypatch.setenv('KRADAR_EVAL_THREADS', '3')
    assert matching.worker_threads() == 3
    for bad in ('abc', '0', '-2'):
        monkeypatch.setenv('KRADAR_EVAL_THREADS', bad)
        with pytest.raises(ValueError, match="KRADAR_EVAL_THREADS='{}'".format(bad)):
            matching.worker_threads()
