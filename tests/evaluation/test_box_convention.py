"""Box conventions without mmdet3d objects: the version table, the option check, the evaluator layout of each
convention written out from mmdet3d 0.17.3's / 1.0.0rc6's definitions, perfect hand-built 0.17.3-style and
1.0-style predictions scoring 100 under their own convention, and the mismatch warning."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.evaluation.inputs import box_convention as bc
from kradar_plugin.evaluation.inputs.kradar_format import info_to_gt_anno, result_to_dt_anno
from tests.evaluation import convention_cases as cases
from tests.evaluation._data import dataset_metrics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
THRESHOLDS = ('0.3', '0.5', '0.7')

# mmdet3d 0.17.3, Box3DMode.convert, written out from its source:
#   CAM -> LIDAR: xyz = R @ loc with R = [[0, 0, 1], [-1, 0, 0], [0, -1, 0]];
#                 sizes = (cam z_size, cam x_size, cam y_size); yaw unchanged
# mmdet3d 1.0.0rc6 (same since 1.0.0rc0):
#   CAM -> LIDAR: the same xyz; sizes = (cam x_size, cam z_size, cam y_size);
#                 yaw = limit_period(-yaw - pi/2, offset=0.5, period=2 pi)
# limit_period(v, offset, period) = v - floor(v / period + offset) * period
CAM_TO_LIDAR_R = np.array([[0., 0., 1.], [-1., 0., 0.], [0., -1., 0.]])


def _wrap(v):
    v = np.asarray(v, dtype=np.float64)
    return v - np.floor(v / (2 * math.pi) + 0.5) * (2 * math.pi)


def lidar_v0173(cam):
    cam = np.asarray(cam, dtype=np.float64)
    xyz = cam[:, :3].dot(CAM_TO_LIDAR_R.T)
    return np.concatenate([xyz, cam[:, [5, 3, 4]], cam[:, 6:7]], axis=1)


def lidar_v1(cam):
    cam = np.asarray(cam, dtype=np.float64)
    xyz = cam[:, :3].dot(CAM_TO_LIDAR_R.T)
    return np.concatenate([xyz, cam[:, [3, 5, 4]], _wrap(-cam[:, 6:7] - math.pi / 2)], axis=1)


def _results(infos, to_lidar, scores=None):
    out, k = [], 0
    for inf in infos:
        boxes = to_lidar(cases.camera_boxes(inf))
        n = len(boxes)
        s = np.linspace(0.9, 0.5, n) if scores is None else np.asarray(scores[k:k + n])
        k += n
        out.append({'pts_bbox': {'boxes_3d': boxes, 'scores_3d': s, 'labels_3d': np.zeros(n, dtype=np.int64)}})
    return out


def _infos(yaws, seed=0):
    return [cases.info(f) for f in cases.frames(cases.objects(yaws, seed))]


def test_bad_box_convention_names_option_and_values():
    result = {'boxes_3d': np.zeros((0, 7)), 'scores_3d': [], 'labels_3d': []}
    for call in (lambda: result_to_dt_anno(result, ('Sedan',), box_convention='0.17.3'),
                 lambda: dataset_metrics([cases.info([])], [result], ['Sedan'], box_convention='mmdet3d>=2'),
                 lambda: dataset_metrics([cases.info([])], [result], ['Sedan'], box_convention='legacy')):
        with pytest.raises(ValueError, match=r"box_convention=.* is not one of \['mmdet3d<1.0', 'mmdet3d>=1.0'\]"):
            call()


def test_none_follows_the_installed_mmdet3d(monkeypatch):
    box = [[20.0, 1.0, 0.5, 4.5, 1.8, 1.6, 0.3]]
    result = {'boxes_3d': np.array(box), 'scores_3d': [0.5], 'labels_3d': [0]}
    for version, dims in ((None, [4.5, 1.6, 1.8]), ('0.17.3', [4.5, 1.6, 1.8]), ('1.0.0rc6', [1.8, 1.6, 4.5])):
        monkeypatch.setattr(bc, 'installed_mmdet3d_version', lambda: version)
        assert bc.resolve_box_convention(None) == (bc.REFACTORED if version == '1.0.0rc6' else bc.LEGACY)
        dt = result_to_dt_anno(result, ('Sedan',))
        np.testing.assert_allclose(dt['dimensions'][0], dims)


def test_evaluator_layout_by_hand():
    """One box (x, y, z, dx, dy, dz, yaw) = (20, 1, 0.5, 4.5, 1.8, 1.6, 3.0) through each version's
    LIDAR -> CAM (0.17.3: loc (-y, -z, x), sizes (dy, dz, dx), yaw; rc6: loc (-y, -z, x), sizes (dx, dz, dy),
    limit_period(-yaw - pi/2)), bbox2result_kitti (alpha = -arctan2(-y, x) + cam yaw) and format_anno
    (location[:, :2] negated, dimensions[:, ::-1])."""
    box = np.array([[20.0, 1.0, 0.5, 4.5, 1.8, 1.6, 3.0]])
    old = bc.lidar_boxes_to_evaluator(box, bc.LEGACY)
    np.testing.assert_allclose(old['location'], [[1.0, 0.5, 20.0]])
    np.testing.assert_allclose(old['dimensions'], [[4.5, 1.6, 1.8]])   # cam (1.8, 1.6, 4.5) reversed
    np.testing.assert_allclose(old['rotation_y'], [3.0])
    np.testing.assert_allclose(old['alpha'], [-math.atan2(-1.0, 20.0) + 3.0])
    new = bc.lidar_boxes_to_evaluator(box, bc.REFACTORED)
    ry = -3.0 - math.pi / 2 + 2 * math.pi                                # -4.5708 wrapped into [-pi, pi)
    np.testing.assert_allclose(new['location'], [[1.0, 0.5, 20.0]])
    np.testing.assert_allclose(new['dimensions'], [[1.8, 1.6, 4.5]])   # cam (4.5, 1.6, 1.8) reversed
    np.testing.assert_allclose(new['rotation_y'], [ry])
    np.testing.assert_allclose(new['alpha'], [-math.atan2(-1.0, 20.0) + ry])
    assert -math.pi <= ry < math.pi
    np.testing.assert_allclose(bc.limit_period([math.pi, -math.pi, 7.0, -7.0]),
                               [-math.pi, -math.pi, 7.0 - 2 * math.pi, -7.0 + 2 * math.pi])


@pytest.mark.parametrize('convention,to_lidar', [(bc.LEGACY, lidar_v0173), (bc.REFACTORED, lidar_v1)])
def test_round_trip_gives_the_info_layout(convention, to_lidar):
    """Info GT -> that version's LiDAR boxes -> our detection layout == the GT layout (rotation_y wrapped
    under 1.0), for yaws all around the circle and beyond it."""
    yaws = list(cases.CIRCLE_YAWS[:12]) + [5.0, -5.0, 9.0]
    inf = cases.info(cases.objects(yaws)[:15])
    gt = info_to_gt_anno(inf, pcd_limit_range=(-1e3, -1e3, -1e3, 1e3, 1e3, 1e3), azimuth_range=(-180, 180))
    boxes = to_lidar(cases.camera_boxes(inf))
    dt = result_to_dt_anno({'boxes_3d': boxes, 'scores_3d': np.ones(15), 'labels_3d': np.zeros(15)}, ('Sedan',),
                           box_convention=convention)
    np.testing.assert_allclose(dt['location'], gt['location'], atol=1e-5)
    np.testing.assert_allclose(dt['dimensions'], gt['dimensions'], atol=1e-5)
    expected_ry = gt['rotation_y'] if convention == bc.LEGACY else _wrap(gt['rotation_y'])
    np.testing.assert_allclose(dt['rotation_y'], expected_ry, atol=1e-6)


@pytest.mark.parametrize('convention,to_lidar', [(bc.LEGACY, lidar_v0173), (bc.REFACTORED, lidar_v1)])
def test_hand_built_perfect_predictions_score_100_and_the_other_convention_does_not(convention, to_lidar):
    other = bc.REFACTORED if convention == bc.LEGACY else bc.LEGACY
    infos = _infos(cases.CIRCLE_YAWS)
    results = _results(infos, to_lidar)
    for protocol in ('legacy', 'revised', 'fixed'):
        _, right = dataset_metrics(infos, results, ['Sedan'], protocol=protocol, box_convention=convention)
        _, wrong = dataset_metrics(infos, results, ['Sedan'], protocol=protocol, box_convention=other)
        for metric in ('bev', '3d'):
            for t in THRESHOLDS:
                key = 'Sedan/{}@{}'.format(metric, t)
                assert right[key] == pytest.approx(100.0), (protocol, key)
                assert wrong[key] < 90.0, (protocol, key, wrong[key])
        assert wrong['Sedan/bev@0.7'] < 50.0


@pytest.mark.parametrize('convention,to_lidar', [(bc.LEGACY, lidar_v0173), (bc.REFACTORED, lidar_v1)])
def test_wrong_convention_mirrors_the_yaw_exactly(convention, to_lidar):
    """Compass yaws: read with the other convention, length/width swap and the footprint angle becomes
    -yaw. The 24 objects at 0, +-pi/2, pi keep their rectangle (IoU 1); the 24 at +-pi/4, +-3pi/4 are turned
    by 90 degrees (IoU 0.238): 24 TP ranked above 24 FP among 48 GT. Exact R40 ('fixed'): precision 1 up
    to recall 0.5, nothing beyond -> 20 of 40 recall positions -> AP 50."""
    other = bc.REFACTORED if convention == bc.LEGACY else bc.LEGACY
    infos = _infos(cases.COMPASS_YAWS, seed=1)
    results = _results(infos, to_lidar, cases.compass_scores())
    _, right = dataset_metrics(infos, results, ['Sedan'], protocol='fixed', box_convention=convention)
    _, wrong = dataset_metrics(infos, results, ['Sedan'], protocol='fixed', box_convention=other)
    for metric in ('bev', '3d'):
        for t in THRESHOLDS:
            key = 'Sedan/{}@{}'.format(metric, t)
            assert right[key] == pytest.approx(100.0), key
            assert wrong[key] == pytest.approx(50.0), key


def test_info_annos_to_radar_boxes_by_hand():
    annos = {'location': np.array([[-2.0, 0.5, 30.0]]), 'dimensions': np.array([[1.8, 1.5, 4.6]]),
             'rotation_y': np.array([0.3])}
    np.testing.assert_allclose(bc.info_annos_to_radar_boxes(annos), [[30.0, 2.0, -0.5, 4.6, 1.8, 1.5, 0.3]])
    np.testing.assert_allclose(bc.info_location_to_radar([[-2.0, 0.5, 30.0]]), [[30.0, 2.0, -0.5]])


def test_recorded_version_and_mismatch_message():
    ckpt = {'meta': {'mmdet3d_version': '0.17.3', 'config': '...'}, 'state_dict': {}}
    assert bc.recorded_mmdet3d_version(ckpt) == '0.17.3'
    assert bc.recorded_mmdet3d_version(ckpt['meta']) == '0.17.3'
    assert bc.recorded_mmdet3d_version({'metainfo': {'mmdet3d_version': '1.0.0rc6'}, 'data_list': []}) == '1.0.0rc6'
    assert bc.recorded_mmdet3d_version([{'annos': {}}]) is None              # EchoFusion's info list
    assert bc.recorded_mmdet3d_version({'meta': {'mmdet_version': '2.28.2'}}) is None
    assert bc.convention_mismatch_message(bc.LEGACY, '0.17.3') is None
    assert bc.convention_mismatch_message(bc.REFACTORED, '1.0.0rc6') is None
    assert bc.convention_mismatch_message(bc.REFACTORED, None) is None
    assert bc.convention_mismatch_message(bc.REFACTORED, 'garbage') is None
    msg = bc.convention_mismatch_message(bc.REFACTORED, '0.17.3', source='checkpoint epoch_12.pth')
    for part in ("box_convention='mmdet3d>=1.0'", 'checkpoint epoch_12.pth', 'mmdet3d 0.17.3',
                 "set box_convention='mmdet3d<1.0'"):
        assert part in msg
    msg = bc.convention_mismatch_message(bc.LEGACY, '1.0.0rc6')
    assert "box_convention='mmdet3d<1.0'" in msg and "set box_convention='mmdet3d>=1.0'" in msg
    with pytest.raises(ValueError, match='box_convention'):
        bc.convention_mismatch_message('new', '0.17.3')


def test_installed_version_is_read_without_importing_mmdet3d():
    """In a fresh interpreter (adapter registration off, since registering imports the frameworks): the
    detected version equals the distribution metadata, and neither kradar_format nor the detection imports
    mmdet3d, torch or mmcv."""
    code = ('import sys\n'
            'from kradar_plugin.evaluation.inputs import box_convention as bc, kradar_format\n'
            'print(bc.installed_mmdet3d_version()); print(bc.resolve_box_convention(None))\n'
            'print(sorted(m for m in sys.modules if m.split(".")[0] in ("mmdet3d", "torch", "mmcv")))\n')
    proc = subprocess.run([sys.executable, '-c', code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0'))
    assert proc.returncode == 0, proc.stderr
    version, convention, imported = proc.stdout.splitlines()
    try:
        try:
            from importlib import metadata
        except ImportError:  # Python 3.7 (EchoFusion's): the backport
            import importlib_metadata as metadata
        expected = metadata.version('mmdet3d')
    except Exception:  # not installed
        expected = None
    assert version == str(expected)
    if expected is None:
        assert convention == bc.LEGACY
    else:
        assert convention == (bc.LEGACY if int(expected.split('.')[0]) < 1 else bc.REFACTORED)
    assert imported == '[]'
