"""K-Radar for mmdet3d 1.x (OpenMMLab 2.0): ``KRadarDet3DDataset`` (mmdet3d ``DATASETS``) reads EchoFusion's
info pickles directly, and ``LoadKRadarPointsFromBEV`` (``TRANSFORMS``) turns a frame's BEV radar tensor
into radar points, so a stock mmdet3d 1.x detector (e.g. ``VoxelNet`` PointPillars) trains and evaluates on
K-Radar-format data with ``KRadarMetric``.

GT boxes are built without mmdet3d's camera->LiDAR conversion (``kradar_plugin.evaluation.inputs.box_convention``):
LiDAR boxes ``(x, y, z_bottom, l, w, h, yaw = rotation_y)``, so the model learns (and outputs) boxes whose
sizes and yaw read as ``'mmdet3d<1.0'`` and whose z is the true bottom; the dataset's ``metainfo`` says so
(``box_convention``, ``results_z_is_bottom``) and ``KRadarMetric`` reads it. Imported by ``kradar_plugin``
when mmdet3d 1.x (``mmdet3d.registry``) is installed.
"""
import os.path as osp

import numpy as np
from mmcv.transforms import BaseTransform
from mmdet3d.datasets import Det3DDataset
from mmdet3d.registry import DATASETS, TRANSFORMS
from mmdet3d.structures import LiDARInstance3DBoxes
from mmdet3d.structures.points import get_points_type

from kradar_plugin.evaluation.inputs.box_convention import LEGACY, info_annos_to_radar_boxes
from .kradar_metric import load_kradar_infos


def annos_to_lidar_boxes(annos):
    """(N, 7) float32 ``(x, y, z_bottom, l, w, h, rotation_y)`` from EchoFusion annos."""
    boxes = info_annos_to_radar_boxes(annos)
    boxes[:, 2] -= 0.5 * boxes[:, 5]
    return boxes.astype(np.float32)


@DATASETS.register_module()
class KRadarDet3DDataset(Det3DDataset):
    """EchoFusion-format K-Radar frames as an mmdet3d 1.x dataset.

    Args (besides ``Det3DDataset``'s): ``radar_key`` -- which ``info['radar']`` path the pipeline loads
    (``results['radar_filename']``, under ``data_root/<sequence>/``). ``sample_idx`` is the frame's position
    in the info list (mmengine numbers samples so), ``frame_id`` the info's ``image_idx``.
    """

    METAINFO = {
        'classes': ('Sedan',),
        # what this dataset's LiDAR boxes (and so its models' outputs) mean, read by KRadarMetric
        'box_convention': LEGACY,
        'results_z_is_bottom': True,
    }

    def __init__(self, data_root=None, ann_file='', radar_key='sp_rdr_path',
                 modality=dict(use_lidar=True, use_camera=False), filter_empty_gt=False, **kwargs):
        self.radar_key = radar_key
        super(KRadarDet3DDataset, self).__init__(data_root=data_root, ann_file=ann_file, modality=modality,
                                                 filter_empty_gt=filter_empty_gt, **kwargs)

    def load_data_list(self):
        infos = load_kradar_infos(self.ann_file)
        return [self.parse_data_info(dict(info, frame_index=i)) for i, info in enumerate(infos)]

    def parse_data_info(self, info):
        radar = info.get('radar', {})
        if self.radar_key not in radar:
            raise ValueError('frame {}: info["radar"] has no {!r} (keys: {}); set radar_key'.format(
                info.get('frame_index'), self.radar_key, sorted(radar)))
        sequence = str(info['annos']['label_file']).split(',')[0]
        data = dict(
            frame_id=info['image']['image_idx'],
            frame_index=info['frame_index'],
            label_file=info['annos']['label_file'],   # names the frame in a failure message
            radar_filename=osp.join(self.data_root or '', sequence, radar[self.radar_key]),
            box_type_3d=self.box_type_3d,
            box_mode_3d=self.box_mode_3d,
        )
        ann_info = self.parse_ann_info(info)
        if not self.test_mode:
            data['ann_info'] = ann_info
        elif self.load_eval_anns:
            data['eval_ann_info'] = ann_info
        return data

    def parse_ann_info(self, info):
        annos = info['annos']
        names = np.asarray(annos['name']).reshape(-1)
        classes = list(self.metainfo['classes'])
        labels = np.array([classes.index(str(n)) if str(n) in classes else -1 for n in names], dtype=np.int64)
        boxes = annos_to_lidar_boxes(annos)
        keep = labels > -1
        for label in labels[keep]:
            self.num_ins_per_cat[label] += 1
        return dict(gt_bboxes_3d=LiDARInstance3DBoxes(boxes[keep], box_dim=7, origin=(0.5, 0.5, 0)),
                    gt_labels_3d=labels[keep], gt_names=names[keep])


@TRANSFORMS.register_module()
class LoadKRadarPointsFromBEV(BaseTransform):
    """``results['radar_filename']`` (``.npy``, (2, X, Y): power, elevation) -> ``results['points']``: every
    cell with power > ``power_threshold`` becomes the point (x, y, z, power) at the cell centre
    (x = x_min + (i + 0.5) cell, y = y_min + (j + 0.5) cell, z = the elevation channel). With
    ``point_cloud_range``, only cells whose centre lies inside its (x, y) range give points, and the
    ``min_points`` strongest of them are kept in any case: mmdet3d's voxel detectors take the batch size from
    the last sample's voxel coordinates, so a sample without points breaks the batch (the same rule as the
    EchoFusion-shaped example's 1.x loader)."""

    def __init__(self, x_min=0.0, y_min=-16.0, cell=0.5, power_threshold=0.15, min_points=8,
                 point_cloud_range=None, coord_type='LIDAR'):
        self.x_min = float(x_min)
        self.y_min = float(y_min)
        self.cell = float(cell)
        self.power_threshold = float(power_threshold)
        self.min_points = int(min_points)
        self.point_cloud_range = None if point_cloud_range is None else [float(v) for v in point_cloud_range]
        self.coord_type = coord_type

    def transform(self, results):
        path = results['radar_filename']
        bev = np.load(path)
        if bev.ndim != 3 or bev.shape[0] < 2:
            raise ValueError('frame {}: {} has shape {}, expected (2, X, Y)'.format(
                results.get('sample_idx'), path, bev.shape))
        power = bev[0].astype(np.float64)
        if self.point_cloud_range is not None:  # cells whose centre lies outside the range give no point
            x = self.x_min + (np.arange(power.shape[0]) + 0.5) * self.cell
            y = self.y_min + (np.arange(power.shape[1]) + 0.5) * self.cell
            lo, hi = self.point_cloud_range[:2], self.point_cloud_range[3:5]
            inside = ((x > lo[0]) & (x < hi[0]))[:, None] & ((y > lo[1]) & (y < hi[1]))[None, :]
            power[~inside] = -np.inf
        keep = power > self.power_threshold
        if keep.sum() < self.min_points:
            keep.flat[np.argsort(power, axis=None)[::-1][:self.min_points]] = True
        keep &= np.isfinite(power)
        rows, cols = np.nonzero(keep)
        points = np.stack([self.x_min + (rows + 0.5) * self.cell, self.y_min + (cols + 0.5) * self.cell,
                           bev[1, rows, cols], bev[0, rows, cols]], axis=1).astype(np.float32).reshape(-1, 4)
        results['points'] = get_points_type(self.coord_type)(points, points_dim=4,
                                                             attribute_dims=dict(power=3))
        results['lidar_path'] = path
        return results

    def __repr__(self):
        return '{}(x_min={}, y_min={}, cell={}, power_threshold={}, min_points={}, coord_type={!r})'.format(
            type(self).__name__, self.x_min, self.y_min, self.cell, self.power_threshold, self.min_points,
            self.coord_type)
