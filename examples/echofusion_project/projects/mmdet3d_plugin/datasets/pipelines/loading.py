"""Radar points from a BEV radar tensor: every cell whose power exceeds a threshold becomes one point."""
import numpy as np
from mmdet3d.core.points import get_points_type
from mmdet.datasets.builder import PIPELINES


@PIPELINES.register_module()
class LoadKRadarPointsFromBEV(object):
    """Load ``results['radar_filename']`` (``.npy``, (2, X, Y): power, elevation) as radar points.

    A cell (i, j) with power > ``power_threshold`` becomes the point (x, y, z, power) at the cell centre,
    x = x_min + (i + 0.5) * cell, y = y_min + (j + 0.5) * cell, z = the elevation channel. The points go to
    ``results['points']`` as mmdet3d points of ``coord_type``, like mmdet3d's ``LoadPointsFromFile``. With
    ``point_cloud_range``, only cells whose centre lies inside its (x, y) range give points, and the
    ``min_points`` strongest of them are kept in any case (a radar always returns something, and a voxel-based
    detector needs at least one point per sample).
    """

    def __init__(self, x_min=0.0, y_min=-16.0, cell=0.5, power_threshold=0.15, min_points=8,
                 point_cloud_range=None, coord_type='LIDAR'):
        self.min_points = int(min_points)
        self.point_cloud_range = None if point_cloud_range is None else [float(v) for v in point_cloud_range]
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
        points = np.stack([self.x_min + (rows + 0.5) * self.cell,
                           self.y_min + (cols + 0.5) * self.cell,
                           bev[1, rows, cols],
                           bev[0, rows, cols]], axis=1).astype(np.float32).reshape(-1, 4)
        points_class = get_points_type(self.coord_type)
        results['points'] = points_class(points, points_dim=4, attribute_dims=dict(power=3))
        results['pts_filename'] = path
        return results

    def __repr__(self):
        return '{}(x_min={}, y_min={}, cell={}, power_threshold={}, min_points={}, coord_type={!r})'.format(
            type(self).__name__, self.x_min, self.y_min, self.cell, self.power_threshold, self.min_points,
            self.coord_type)
