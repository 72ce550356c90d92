"""Radar points from a BEV radar tensor: every cell whose power exceeds a threshold becomes one point."""
import numpy as np
from mmdet3d.core.points import get_points_type
from mmdet.datasets.builder import PIPELINES


@PIPELINES.register_module()
class LoadKRadarPointsFromBEV(object):
    """Load ``results['radar_filename']`` (``.npy``, (2, X, Y): power, elevation) as radar points.

    A cell (i, j) with power > ``power_threshold`` becomes the point (x, y, z, power) at the cell centre,
    x = x_min + (i + 0.5) * cell, y = y_min + (j + 0.5) * cell, z = the elevation channel. The points go to
    ``results['points']`` as mmdet3d points of ``coord_type``, like mmdet3d's ``LoadPointsFromFile``.
    """

    def __init__(self, x_min=0.0, y_min=-16.0, cell=0.5, power_threshold=0.15, coord_type='LIDAR'):
        self.x_min = float(x_min)
        self.y_min = float(y_min)
        self.cell = float(cell)
        self.power_threshold = float(power_threshold)
        self.coord_type = coord_type

    def __call__(self, results):
        path = results['radar_filename']
        bev = np.load(path)
        if bev.ndim != 3 or bev.shape[0] < 2:
            raise ValueError('frame {}: {} has shape {}, expected (2, X, Y)'.format(
                results.get('sample_idx'), path, bev.shape))
        rows, cols = np.nonzero(bev[0] > self.power_threshold)
        points = np.stack([self.x_min + (rows + 0.5) * self.cell,
                           self.y_min + (cols + 0.5) * self.cell,
                           bev[1, rows, cols],
                           bev[0, rows, cols]], axis=1).astype(np.float32).reshape(-1, 4)
        points_class = get_points_type(self.coord_type)
        results['points'] = points_class(points, points_dim=4, attribute_dims=dict(power=3))
        results['pts_filename'] = path
        return results

    def __repr__(self):
        return '{}(x_min={}, y_min={}, cell={}, power_threshold={}, coord_type={!r})'.format(
            type(self).__name__, self.x_min, self.y_min, self.cell, self.power_threshold, self.coord_type)
