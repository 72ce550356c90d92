"""``KRadarDet3DDataset`` and ``LoadKRadarPointsFromBEV`` built through mmdet3d 1.4's own registries on the
demo data: frames, GT boxes (bottom z, (l, w, h), yaw), the metainfo KRadarMetric reads, and points for every
frame (a frame without radar returns would break a voxel detector's batch)."""
import numpy as np
import pytest
from mmdet3d.registry import DATASETS, TRANSFORMS
from mmengine.registry import init_default_scope

import kradar_plugin  # noqa: F401  (registers the components)
from kradar_plugin.evaluation.inputs.box_convention import info_annos_to_radar_boxes

from .helpers import demo_data

pytestmark = [pytest.mark.mm2]

RANGE = [0, -6.4, -2.0, 72.0, 6.4, 6.0]


@pytest.fixture(scope='module')
def root(tmp_path_factory):
    init_default_scope('mmdet3d')  # as a config's default_scope does
    return demo_data(tmp_path_factory.mktemp('kradar_det3d'), frames=8, train_frames=4)


def build(root, test_mode, pipeline=()):
    return DATASETS.build(dict(type='KRadarDet3DDataset', data_root=root, radar_key='bev_path',
                               ann_file='kradar_infos_val.pkl' if test_mode else 'kradar_infos_train.pkl',
                               metainfo=dict(classes=['Sedan']), test_mode=test_mode, pipeline=list(pipeline)))


def test_frames_gt_and_metainfo(root):
    import pickle
    train = build(root, test_mode=False)
    with open(root + '/kradar_infos_train.pkl', 'rb') as f:
        infos = pickle.load(f)
    assert len(train) == len(infos) == 4
    assert train.metainfo['box_convention'] == 'mmdet3d<1.0' and train.metainfo['results_z_is_bottom'] is True
    for i, info in enumerate(infos):
        data = train.get_data_info(i)
        assert data['sample_idx'] == i and data['frame_id'] == info['image']['image_idx']
        names = np.asarray(info['annos']['name']).reshape(-1)
        expected = info_annos_to_radar_boxes(info['annos'])[names == 'Sedan']
        expected[:, 2] -= expected[:, 5] / 2  # bottom z
        boxes = data['ann_info']['gt_bboxes_3d'].tensor.numpy()
        np.testing.assert_allclose(boxes, expected, rtol=0, atol=1e-5)
        assert (data['ann_info']['gt_labels_3d'] == 0).all()
    val = build(root, test_mode=True)
    assert 'ann_info' not in val.get_data_info(0) and 'eval_ann_info' in val.get_data_info(0)


def test_every_frame_gets_points_inside_the_range(root):
    load = TRANSFORMS.build(dict(type='LoadKRadarPointsFromBEV', point_cloud_range=RANGE, min_points=8))
    bare = TRANSFORMS.build(dict(type='LoadKRadarPointsFromBEV', point_cloud_range=RANGE, min_points=0))
    val = build(root, test_mode=True)
    counts = []
    for i in range(len(val)):
        data = val.get_data_info(i)
        points = load(dict(data))['points'].tensor.numpy()
        assert len(points) >= 8
        assert (points[:, 0] > RANGE[0]).all() and (points[:, 0] < RANGE[3]).all()
        assert (points[:, 1] > RANGE[1]).all() and (points[:, 1] < RANGE[4]).all()
        counts.append(len(bare(dict(data))['points'].tensor))
    assert min(counts) < 8  # the demo's empty frame: (almost) nothing above the threshold without min_points


def test_the_pipeline_packs_inputs_for_mmdet3d(root):
    dataset = build(root, test_mode=False, pipeline=[
        dict(type='LoadKRadarPointsFromBEV', point_cloud_range=RANGE),
        dict(type='LoadAnnotations3D', with_bbox_3d=True, with_label_3d=True),
        dict(type='Pack3DDetInputs', keys=['points', 'gt_bboxes_3d', 'gt_labels_3d'])])
    sample = dataset[0]
    assert sample['inputs']['points'].shape[1] == 4
    assert sample['data_samples'].sample_idx == 0
    n_gt = len(dataset.get_data_info(0)['ann_info']['gt_labels_3d'])
    assert n_gt > 0 and len(sample['data_samples'].gt_instances_3d.bboxes_3d) == n_gt
