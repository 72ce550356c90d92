"""kradar_eval: hand-derived values, protocol quirks, invariances and an independent reference."""
import numpy as np
import pytest

from kradar_plugin.evaluation import kradar_eval

from ._data import evaluated, frame, noisy_dets, perfect, random_gt
from ._reference import radar_rect, reference_ap

ALL = ('legacy', 'revised', 'fixed')


def _aps(protocol, gts, dts, metric='bev', eval_types=('bev', '3d')):
    """AP at IoU 0.3, 0.5, 0.7 (first column) of every given frame (``kradar_eval``: no frame rule)."""
    return _ap_of(kradar_eval(gts, dts, ['Sedan'], eval_types=eval_types, protocol=protocol)[1], metric)


def _ap_of(ap_dict, metric, ious=(0.3, 0.5, 0.7), cls='Sedan'):
    return np.array([ap_dict['{}/{}@{:g}'.format(cls, metric, iou)] for iou in ious])


def _evaluation(gts, dts, protocol, eval_types=('bev', '3d'), classes=('Sedan',), **settings):
    """The Evaluation of ``KRadarEvaluator`` on annotation lists (frames without GT: the protocol's rule)."""
    return evaluated(gts, dts, classes, protocol, eval_types=eval_types, **settings).evaluations[0]


@pytest.mark.parametrize('n_frames', [1, 2, 3])
def test_perfect_rotated_detections_score_100_in_fixed(n_frames):
    rs = np.random.RandomState(n_frames)
    gts = [random_gt(rs, 1 + f) for f in range(n_frames)]  # rotated boxes, 1..3 per frame
    dts = [perfect(g) for g in gts]
    for metric in ('bev', '3d'):
        assert np.allclose(_aps('fixed', gts, dts, metric), 100.0)


def test_perfect_detections_score_100_everywhere_beyond_40_gt():
    rs = np.random.RandomState(0)
    gts = [random_gt(rs, 5) for _ in range(10)]  # 50 GT
    dts = [perfect(g, rs.uniform(0.3, 1.0, 5)) for g in gts]
    for proto in ALL:
        for metric in ('bev', '3d'):
            assert np.allclose(_aps(proto, gts, dts, metric), 100.0), proto


def test_legacy_small_set_quirk_two_gt_gives_100_over_11():
    gt = frame([[0, 0, 10], [2, 0, 30]], [[4, 1.5, 2]] * 2, [0.3, -1.0])
    ap = _aps('legacy', [gt], [perfect(gt)])
    assert np.allclose(ap, 100.0 / 11)          # thresholds fill entries 0 and 1; only entry 0 is read
    assert np.allclose(_aps('revised', [gt], [perfect(gt)]), 2 * 100.0 / 41)
    assert np.allclose(_aps('fixed', [gt], [perfect(gt)]), 100.0)


def _fp_first_case():
    # 2 GT; detections: a false positive (score 0.9) above two exact hits (0.8, 0.7)
    gt = frame([[0, 0, 10], [2, 0, 30]], [[4, 1.5, 2]] * 2, [0.0, 0.0])
    dt = frame([[0, 0, 10], [2, 0, 30], [-4, 0, 60]], [[4, 1.5, 2]] * 3, [0.0] * 3, scores=[0.8, 0.7, 0.9])
    return [gt], [dt]


def test_single_false_positive_above_true_positives_hand_values():
    gts, dts = _fp_first_case()
    # operating points: t=0.8 -> P=1/2, R=1/2; t=0.7 -> P=2/3, R=1. Legacy thresholds: [0.8, 0.7]
    # precision array after the running max: [2/3, 2/3, 0, ...]
    assert np.allclose(_aps('legacy', gts, dts), (2 / 3.) / 11 * 100)        # 6.0606
    assert np.allclose(_aps('revised', gts, dts), (2 * 2 / 3.) / 41 * 100)   # 3.2520
    assert np.allclose(_aps('fixed', gts, dts), 2 / 3. * 100)                # every r in (0,1]: 2/3


def test_r40_hand_value_with_missed_gt():
    # 4 GT; detections TP 0.9, FP 0.8, TP 0.7: points (R 1/4, P 1), (1/4, 1/2), (1/2, 2/3)
    gt = frame([[0, 0, 10], [2, 0, 20], [-2, 0, 40], [0, 0, 60]], [[4, 1.5, 2]] * 4, [0.0] * 4)
    dt = frame([[0, 0, 10], [5, 0, 50], [2, 0, 20]], [[4, 1.5, 2]] * 3, [0.0] * 3, scores=[0.9, 0.8, 0.7])
    assert np.allclose(_aps('fixed', [gt], [dt]), (10 * 1 + 10 * 2 / 3.) / 40 * 100)   # 41.667
    assert np.allclose(_aps('legacy', [gt], [dt]), 1 / 11. * 100)                        # [1, 2/3, 0..]
    assert np.allclose(_aps('revised', [gt], [dt]), (1 + 2 / 3.) / 41 * 100)


def test_permutations_change_nothing():
    rs = np.random.RandomState(3)
    gts = [random_gt(rs, rs.randint(0, 6)) for _ in range(12)]
    dts = [noisy_dets(rs, g, rs.randint(0, 3)) for g in gts]
    order = rs.permutation(len(gts))
    gts2 = [gts[i] for i in order]
    dts2 = []
    for i in order:
        d = dts[i]
        p = rs.permutation(len(d['name']))
        dts2.append(dict((k, np.asarray(v)[p]) for k, v in d.items()))
    for proto in ALL:
        a = kradar_eval(gts, dts, ['Sedan'], protocol=proto)[1]
        b = kradar_eval(gts2, dts2, ['Sedan'], protocol=proto)[1]
        assert a.keys() == b.keys()
        assert np.allclose([a[k] for k in a], [b[k] for k in a]), proto


@pytest.mark.parametrize('proto', ALL)
def test_matches_independent_shapely_reference(proto):
    rs = np.random.RandomState(11)
    gts = [random_gt(rs, rs.randint(0, 5)) for _ in range(15)]
    dts = [noisy_dets(rs, g, rs.randint(0, 3)) for g in gts]
    ap = kradar_eval(gts, dts, ['Sedan'], eval_types=('bev', '3d'), protocol=proto)[1]   # every frame, as the reference
    for metric in ('bev', '3d'):
        for i, iou in enumerate((0.3, 0.5, 0.7)):
            want = reference_ap(gts, dts, 'Sedan', metric, iou, proto)
            assert _ap_of(ap, metric)[i] == pytest.approx(want, abs=1e-9), (metric, iou)


def test_quirk_yaw_footprint_turned_90_degrees_in_legacy_only():
    # GT 4 m long (heading along x), detection shifted 1.5 m along the heading
    gt = frame([[0, 0, 20]], [[4, 1.5, 2]], [0.0])
    dt = frame([[0, 0, 21.5]], [[4, 1.5, 2]], [0.0], scores=[0.9])
    physical = radar_rect(21.5, 0, 4, 2, 0).intersection(radar_rect(20, 0, 4, 2, 0)).area
    physical_iou = physical / (16 - physical)                       # 5 / 11 = 0.4545
    assert physical_iou == pytest.approx(5 / 11.)
    ev_fixed = _evaluation([gt], [dt], 'fixed', eval_types=('bev',))
    ev_legacy = _evaluation([gt], [dt], 'legacy', eval_types=('bev',))
    # fixed sees the physical 0.4545 (TP at 0.3); legacy turns both boxes 90 deg -> IoU 1/7 (miss)
    assert ev_fixed.ap['bev'][0, 0, 0] == pytest.approx(100.0)
    assert ev_legacy.ap['bev'][0, 0, 0] == 0.0


def test_quirk_bottom_origin_height_in_legacy_only():
    # identical footprints; GT h=2 centred at z=0, detection h=1 centred at z=0.5
    gt = frame([[0, 0.0, 20]], [[4, 2.0, 2]], [0.0])
    dt = frame([[0, 0.5, 20]], [[4, 1.0, 2]], [0.0], scores=[0.9])
    # centre origin: height overlap 1 -> IoU 8 / (16 + 8 - 8) = 0.5; legacy [z-h, z]: overlap 0.5 -> 0.2
    for proto, hit in (('legacy', False), ('revised', True), ('fixed', True)):
        ap = _evaluation([gt], [dt], proto, eval_types=('3d',)).ap['3d'][0, 0, 0]  # IoU 0.3
        assert (ap > 0) == hit, proto


def test_quirk_key_mislabels_and_unambiguous_keys():
    gt = frame([[0, 0, 20]], [[4, 1.5, 2]], [0.4])
    dt = frame([[0, 0, 20]], [[4, 1.5, 1.2]], [0.4], scores=[0.9])   # BEV IoU 0.6 at any yaw (same centre)
    res, d = kradar_eval([gt], [dt], ['Sedan'], eval_types=['bbox', 'bev', '3d'], protocol='legacy')
    assert d['kradar/Sedan_BEV_easy_strict'] == pytest.approx(100 / 11.)   # "strict" is AP@0.3
    assert d['kradar/Sedan_BEV_easy_loose'] == 0.0                         # "loose" is AP@0.7
    assert d['Sedan/bev@0.3'] == d['Sedan/bev@0.5'] == pytest.approx(100 / 11.)
    assert d['Sedan/bev@0.7'] == 0.0
    assert 'Sedan AP@0.30, 0.30, 0.30:\nbbox AP:' in res
    fixed = kradar_eval([gt], [dt], ['Sedan'], protocol='fixed')[1]
    assert not [k for k in fixed if k.startswith('kradar/')]
    assert fixed['Sedan/bev@0.5'] == 100.0 and fixed['Sedan/bev@0.7'] == 0.0
    assert 'Sedan/bev@0.5/0-30m' in fixed and not [k for k in fixed if '/bbox@' in k]   # fake 2D dropped


def test_frames_without_gt_count_their_false_positives():
    gt = frame([[0, 0, 20]], [[4, 1.5, 2]], [0.0])
    empty = frame(np.zeros((0, 3)), np.zeros((0, 3)), [])
    fp = frame([[0, 0, 40]], [[4, 1.5, 2]], [0.0], scores=[0.95])
    gts, dts = [empty, gt], [fp, perfect(gt, [0.5])]            # first frame has no GT at all
    assert _aps('fixed', gts, dts) == pytest.approx(50.0)       # points (R 0, P 0), (R 1, P 1/2)
    assert _aps('legacy', gts, dts) == pytest.approx(50.0 / 11)


def test_distance_bins_ignore_objects_outside_the_bin():
    near = frame([[0, 0, 10]], [[4, 1.5, 2]], [0.0])
    far = frame([[0, 0, 60]], [[4, 1.5, 2]], [0.0])
    d_near = perfect(near, [0.9])
    d_far_fp = frame([[3, 0, 40]], [[4, 1.5, 2]], [0.0], scores=[0.99])   # FP in the 30-50 bin
    ev = _evaluation([near, far], [d_near, d_far_fp], 'fixed', eval_types=('bev',))
    assert ev.columns == ('all', '0-30m', '30-50m', '50-72m')
    ap = ev.ap['bev'][0, :, 0]
    assert ap[1] == pytest.approx(100.0)     # the 30-50 m FP is ignored in the 0-30 m bin
    assert ap[2] == 0.0 and ap[3] == 0.0     # no GT in 30-50; GT missed in 50-72
    ev2 = _evaluation([near, far], [d_near, d_far_fp], 'fixed', eval_types=('bev',), distance_edges=(0, 50, 72))
    assert ev2.columns == ('all', '0-50m', '50-72m')
    assert ev2.ap['bev'][0, 1, 0] == pytest.approx(50.0)   # FP at 0.99 above the TP at 0.9


def test_small_and_empty_inputs_give_numbers():
    with pytest.warns(UserWarning, match='no frames'):
        res, d = kradar_eval([], [], ['Sedan'])
    assert d['Sedan/bev@0.3'] == 0.0 and 'kradar/Sedan_BEV_easy_strict' in d
    empty = frame(np.zeros((0, 3)), np.zeros((0, 3)), [])
    gt = frame([[0, 0, 20]], [[4, 1.5, 2]], [0.0])
    res, d = kradar_eval([empty, gt], [perfect(empty), perfect(gt)], ['Sedan'])  # first frame empty
    assert d['Sedan/3d@0.7'] == pytest.approx(100 / 11.)
    with pytest.warns(UserWarning, match='no detections'):
        kradar_eval([gt], [perfect(empty)], ['Sedan'], eval_types=['bev', '3d'])


def test_eval_types_argument_is_not_mutated_and_aos_needs_bbox():
    gt = frame([[0, 0, 20]], [[4, 1.5, 2]], [0.0])
    types = ['bev', '3d']
    res, d = kradar_eval([gt], [perfect(gt)], ['Sedan'], eval_types=types)
    assert types == ['bev', '3d'] and 'aos' not in res and 'bbox AP' not in res


def test_multiple_classes_overall_keys():
    gt = frame([[0, 0, 20], [3, 0, 30]], [[4, 1.5, 2], [1, 1.7, 1]], [0, 0], names=['Sedan', 'Pedestrian'])
    res, d = kradar_eval([gt], [perfect(gt)], ['Sedan', 'Pedestrian', 'Nope'])
    assert 'kradar/Overall_BEV_easy' in d and 'Overall/bev@0.5' in d
    assert d['kradar/Pedestrian_3D_easy_strict'] == pytest.approx(100 / 11.)


def test_protocol_overrides_and_numba_free_kernels_agree(monkeypatch):
    from kradar_plugin.evaluation import _jit, statistics
    rs = np.random.RandomState(5)
    gts = [random_gt(rs, rs.randint(0, 5)) for _ in range(25)]
    dts = [noisy_dets(rs, g, rs.randint(0, 4)) for g in gts]
    ev = _evaluation(gts, dts, 'legacy', eval_types=('bev',), iou_thresholds=(0.25,))
    assert ev.ious == (0.25,) and ev.ap['bev'].shape == (1, 3, 1)
    if _jit.mode()[0] != 'numba':
        pytest.skip('numba is not usable here ({}): only the plain path exists'.format(_jit.mode()[1]))
    compiled = {}
    for proto in ALL:
        compiled[proto] = _evaluation(gts, dts, proto, curves=True)
    # the kernels really ran compiled
    assert statistics.frame_events.signatures and statistics._every_score_kernel.signatures
    monkeypatch.setenv('KRADAR_EVAL_NO_NUMBA', '1')
    _jit.reset()
    try:
        for proto in ALL:
            plain = _evaluation(gts, dts, proto, curves=True)
            assert _jit.mode() == ('plain', 'KRADAR_EVAL_NO_NUMBA=1')
            assert not hasattr(statistics.frame_events, 'signatures')
            for metric in ('bev', '3d'):
                assert np.array_equal(plain.ap[metric], compiled[proto].ap[metric]), (proto, metric)
                assert np.any(plain.ap[metric] > 0)
            assert compiled[proto].curves and plain.curves.keys() == compiled[proto].curves.keys()
            for key, curve in compiled[proto].curves.items():
                assert np.array_equal(plain.curves[key]['thresholds'], curve['thresholds'])
                assert np.array_equal(plain.curves[key]['threshold_precision'], curve['threshold_precision'])
    finally:
        monkeypatch.delenv('KRADAR_EVAL_NO_NUMBA')
        _jit.reset()


# --- EchoFusion's rules and call shape -----------------------------------------------------------------

def _person_sitting_case():
    # a Pedestrian found at 0.9, and a Pedestrian detection (0.95) exactly on a Person_sitting GT
    gt = frame([[0, 0, 20], [3, 0, 30]], [[0.6, 1.7, 0.6], [0.7, 1.2, 0.6]], [0.0, 0.0],
               names=['Pedestrian', 'Person_sitting'])
    dt = frame([[0, 0, 20], [3, 0, 30]], [[0.6, 1.7, 0.6], [0.7, 1.2, 0.6]], [0.0, 0.0],
               names=['Pedestrian', 'Pedestrian'], scores=[0.9, 0.95])
    return [gt], [dt]


@pytest.mark.parametrize('proto,want', [
    # ignored: the 0.95 detection matches the Person_sitting GT and counts neither way; 1 GT, thresholds
    # [0.9], precision 1 -> 100/11
    ('legacy', 100 / 11.),
    # not special (eval_revised's rule never fires): the 0.95 detection is a FP -> precision 1/2 at the
    # only threshold -> 0.5 / 41
    ('revised', 50 / 41.),
    # ignored: operating points (R 0, P 0) at 0.95 and (R 1, P 1) at 0.9 -> R40 100
    ('fixed', 100.0),
])
def test_person_sitting_is_ignored_for_pedestrian_like_echofusion(proto, want):
    gts, dts = _person_sitting_case()
    ev = _evaluation(gts, dts, proto, classes=('Pedestrian',))
    assert ev.num_gt[('Pedestrian', 0)] == 1                  # Person_sitting never counts as a GT
    for metric in ('bev', '3d'):
        assert ev.ap[metric][0, 0, :] == pytest.approx([want] * 3)


@pytest.mark.parametrize('proto,want', [('legacy', 100 / 11.), ('revised', 50 / 41.), ('fixed', 100.0)])
def test_bus_or_truck_is_ignored_for_sedan_like_echofusion(proto, want):
    gt = frame([[0, 0, 20], [3, 0, 40]], [[4.5, 1.6, 1.9], [9, 3, 2.6]], [0.0, 0.0], names=['Sedan', 'Bus or Truck'])
    dt = frame([[0, 0, 20], [3, 0, 40]], [[4.5, 1.6, 1.9], [9, 3, 2.6]], [0.0, 0.0], names=['Sedan', 'Sedan'],
               scores=[0.9, 0.95])
    assert _aps(proto, [gt], [dt]) == pytest.approx([want] * 3)


def _iou_06_case():
    gt = frame([[0, 0, 20]], [[4, 1.5, 2]], [0.4])
    dt = frame([[0, 0, 20]], [[4, 1.5, 1.2]], [0.4], scores=[0.9])   # BEV IoU 0.6 (same centre and yaw)
    return [gt], [dt]


@pytest.mark.parametrize('iou_mode,ious,found', [('all', (0.3, 0.5, 0.7), (True, True, False)),
                                                 ('easy', (0.3,), (True,)), ('mod', (0.5,), (True,)),
                                                 ('hard', (0.7,), (False,))])
def test_iou_mode_positional_and_keyword_like_echofusion(iou_mode, ious, found):
    gts, dts = _iou_06_case()
    res, d = kradar_eval(gts, dts, ['Sedan'], iou_mode)
    assert kradar_eval(gts, dts, ['Sedan'], iou_mode=iou_mode) == (res, d)
    # EchoFusion labels by threshold index: the first is "_strict", the others "_loose"
    for i, (iou, hit) in enumerate(zip(ious, found)):
        value = 100 / 11. if hit else 0.0
        assert d['Sedan/bev@{:g}'.format(iou)] == pytest.approx(value)
        if i == 0:
            assert d['kradar/Sedan_BEV_easy_strict'] == pytest.approx(value)
    assert d['kradar/Sedan_BEV_hard_loose' if len(ious) > 1 else 'kradar/Sedan_BEV_hard_strict'] == \
        pytest.approx(100 / 11. if found[-1] else 0.0)
    assert ('kradar/Sedan_BEV_easy_loose' in d) == (len(ious) > 1)
    assert sorted(k for k in d if '@' in k) == sorted('Sedan/{}@{:g}'.format(m, i) for m in ('bev', '3d')
                                                      for i in ious)
    assert res.count('Sedan AP@') == len(ious) and 'Sedan AP@{0:.2f}, {0:.2f}, {0:.2f}:'.format(ious[0]) in res


def test_echofusion_defaults_and_call_errors():
    gts, dts = _iou_06_case()
    res, d = kradar_eval(gts, dts, ['Sedan'])                  # EchoFusion's default eval_types: bev, 3d
    assert 'bbox AP' not in res and not [k for k in d if '_2D_' in k or 'bbox' in k]
    with pytest.raises(ValueError, match="iou_mode=.*pass eval_types=... by keyword"):
        kradar_eval(gts, dts, ['Sedan'], ['bev', '3d'])       # our old positional eval_types
    with pytest.raises(ValueError, match='iou_mode'):
        kradar_eval(gts, dts, ['Sedan'], 'moderate')
    with pytest.raises(ValueError, match='not both'):
        kradar_eval(gts, dts, ['Sedan'], 'hard', iou_thresholds=(0.5,))
    with pytest.raises(ValueError, match='aos needs bbox'):
        kradar_eval(gts, dts, ['Sedan'], eval_types=['bev', 'aos'])
    with pytest.raises(TypeError):
        kradar_eval(gts, dts, ['Sedan'], 'all', ['bev'], 'legacy')   # protocol is keyword-only
    assert kradar_eval(gts, dts, ['Sedan'], 'all', iou_thresholds=(0.5,))[1]['Sedan/bev@0.5'] == \
        pytest.approx(100 / 11.)
