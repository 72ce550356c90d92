"""Box conventions against the REAL installed mmdet3d (1.0.0rc6 in the stack): LiDAR boxes made exactly as
EchoFusion's dataset makes its training targets (``CameraInstance3DBoxes(info boxes).convert_to(LIDAR)``),
fed back as perfect predictions, and our detection layout compared field by field with mmdet3d's own
``convert_to(CAM)`` followed by bbox2result_kitti's fields and EchoFusion's format_anno flips."""
import math

import numpy as np
import pytest

torch = pytest.importorskip('torch')
mmdet3d = pytest.importorskip('mmdet3d')
from mmdet3d.core.bbox import Box3DMode, CameraInstance3DBoxes, LiDARInstance3DBoxes  # noqa: E402

from kradar_plugin.evaluation.inputs import box_convention as bc  # noqa: E402
from kradar_plugin.evaluation.inputs.kradar_format import result_to_dt_anno  # noqa: E402
from tests.evaluation import convention_cases as cases  # noqa: E402
from tests.evaluation._data import dataset_metrics  # noqa: E402

INSTALLED = bc.mmdet3d_box_convention(mmdet3d.__version__)
THRESHOLDS = ('0.3', '0.5', '0.7')
needs_refactored = pytest.mark.skipif(INSTALLED != bc.REFACTORED,
                                      reason='needs mmdet3d >= 1.0.0rc0, found ' + mmdet3d.__version__)


def _echofusion_results(infos, scores=None):
    """Per frame: EchoFusion's get_ann_info conversion of the info GT under the installed mmdet3d, as the
    model's output ({'pts_bbox': {LiDARInstance3DBoxes, scores, labels}})."""
    out, k = [], 0
    for inf in infos:
        lidar = CameraInstance3DBoxes(cases.camera_boxes(inf)).convert_to(Box3DMode.LIDAR)
        assert isinstance(lidar, LiDARInstance3DBoxes)
        n = len(lidar)
        s = torch.linspace(0.9, 0.5, n) if scores is None else torch.tensor(scores[k:k + n], dtype=torch.float32)
        k += n
        out.append({'pts_bbox': {'boxes_3d': lidar, 'scores_3d': s, 'labels_3d': torch.zeros(n, dtype=torch.long)}})
    return out


def test_installed_convention_is_detected():
    assert bc.installed_mmdet3d_version() == mmdet3d.__version__
    assert bc.resolve_box_convention(None) == INSTALLED


@needs_refactored
def test_echofusion_targets_under_rc6_are_w_l_h_and_mirrored_yaw():
    """What a model trained under mmdet3d >= 1.0 learns: sizes (w, l, h), yaw limit_period(-ry - pi/2)."""
    inf = cases.info(cases.objects([0.3, 2.5, -2.9]))
    lidar = CameraInstance3DBoxes(cases.camera_boxes(inf)).convert_to(Box3DMode.LIDAR).tensor.numpy()
    a = inf['annos']
    np.testing.assert_allclose(lidar[:, 3:6], a['dimensions'][:, [0, 2, 1]], rtol=1e-6)   # (w, l, h)
    np.testing.assert_allclose(lidar[:, 6], [-0.3 - math.pi / 2, -2.5 - math.pi / 2 + 2 * math.pi,
                                             2.9 - math.pi / 2], atol=1e-6)


@needs_refactored
@pytest.mark.parametrize('protocol', ['legacy', 'revised', 'fixed'])
def test_rc6_perfect_predictions_score_100_with_the_installed_convention(protocol):
    infos = [cases.info(f) for f in cases.frames(cases.objects(cases.CIRCLE_YAWS, seed=2))]
    results = _echofusion_results(infos)
    _, auto = dataset_metrics(infos, results, ['Sedan'], protocol=protocol)
    _, explicit = dataset_metrics(infos, results, ['Sedan'], protocol=protocol, box_convention=bc.REFACTORED)
    _, wrong = dataset_metrics(infos, results, ['Sedan'], protocol=protocol, box_convention=bc.LEGACY)
    assert auto == explicit
    for metric in ('bev', '3d'):
        for t in THRESHOLDS:
            key = 'Sedan/{}@{}'.format(metric, t)
            assert explicit[key] == pytest.approx(100.0), key
            assert wrong[key] < 90.0, (key, wrong[key])
    assert wrong['Sedan/bev@0.7'] < 50.0


@needs_refactored
def test_rc6_boxes_read_as_0_17_3_mirror_the_yaw():
    """Compass yaws (see convention_cases): 24 rectangles unchanged, 24 turned by 90 degrees -> exact R40
    AP 50 at every threshold under the 0.17.3 reading, 100 under the right one."""
    infos = [cases.info(f) for f in cases.frames(cases.objects(cases.COMPASS_YAWS, seed=3))]
    results = _echofusion_results(infos, cases.compass_scores())
    _, right = dataset_metrics(infos, results, ['Sedan'], protocol='fixed')
    _, wrong = dataset_metrics(infos, results, ['Sedan'], protocol='fixed', box_convention=bc.LEGACY)
    for metric in ('bev', '3d'):
        for t in THRESHOLDS:
            key = 'Sedan/{}@{}'.format(metric, t)
            assert right[key] == pytest.approx(100.0), key
            assert wrong[key] == pytest.approx(50.0), key


@needs_refactored
def test_layout_equals_mmdet3d_convert_to_cam_plus_format_anno():
    """Arbitrary LiDAR boxes (yaw over three turns, every size different): our 'mmdet3d>=1.0' layout ==
    rc6's LiDARInstance3DBoxes.convert_to(CAM) -> bbox2result_kitti fields (location cam[:3], dimensions
    cam[3:6], rotation_y cam[6], alpha -arctan2(-y, x) + cam[6]) -> format_anno (location[:, [0, 1]] *= -1,
    dimensions[:, [2, 1, 0]])."""
    rng = np.random.RandomState(7)
    n = 40
    yaw = np.linspace(-3 * math.pi, 3 * math.pi, n) + 0.05
    # away from the wrap point of limit_period(-yaw - pi/2) (yaw = pi/2 mod 2 pi), where float32 and float64
    # may land on opposite ends of [-pi, pi)
    assert np.min(np.abs(bc.limit_period(yaw - math.pi / 2))) > 1e-3
    t = np.stack([rng.uniform(5, 60, n), rng.uniform(-5, 5, n), rng.uniform(-1, 2, n), rng.uniform(3.5, 5.5, n),
                  rng.uniform(1.5, 2.2, n), rng.uniform(1.3, 2.0, n), yaw], axis=1).astype(np.float32)
    lidar = LiDARInstance3DBoxes(torch.from_numpy(t))
    cam = lidar.convert_to(Box3DMode.CAM).tensor.numpy().astype(np.float64)
    expected_loc = cam[:, :3].copy()
    expected_loc[:, [0, 1]] *= -1
    result = {'pts_bbox': {'boxes_3d': lidar, 'scores_3d': torch.ones(n), 'labels_3d': torch.zeros(n, dtype=torch.long)}}
    dt = result_to_dt_anno(result, ('Sedan',), box_convention=bc.REFACTORED)
    assert len(dt['name']) == n
    np.testing.assert_allclose(dt['location'], expected_loc, atol=1e-5)
    np.testing.assert_allclose(dt['dimensions'], cam[:, 3:6][:, [2, 1, 0]], atol=1e-6)
    np.testing.assert_allclose(dt['rotation_y'], cam[:, 6], atol=2e-6)
    np.testing.assert_allclose(dt['alpha'], -np.arctan2(-t[:, 1], t[:, 0]) + cam[:, 6], atol=2e-6)
    # the same call with the installed convention (None) is the same layout
    auto = result_to_dt_anno(result, ('Sedan',))
    for key in ('location', 'dimensions', 'rotation_y', 'alpha'):
        np.testing.assert_array_equal(auto[key], dt[key])
