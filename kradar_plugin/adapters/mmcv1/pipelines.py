"""Data pipeline steps for K-Radar radar tensors (mmdet ``PIPELINES``).

``LoadKRadarTensor`` reads the per-frame ``.npy`` named by ``results['radar_filename']`` into
``results['radar']``; ``LoadKRadarAnnotations`` copies the LiDAR-frame GT from ``results['ann_info']``;
``KRadarFormatBundle`` wraps them in mmcv ``DataContainer``s (radar stacked into a batch tensor, GT boxes as
per-sample tensors) so that mmdet's ``Collect`` and mmcv's ``collate``/``MMDataParallel`` handle them like
images and 2D boxes.
"""
import numpy as np
import torch
from mmcv.parallel import DataContainer as DC
from mmdet.datasets.builder import PIPELINES


@PIPELINES.register_module()
class LoadKRadarTensor(object):
    """Load ``results['radar_filename']`` (a ``.npy`` array, e.g. (C, X, Y)) as float32 ``results['radar']``.

    Args:
        channels: optional list of channel indices to keep (first axis).
        mmap: open the file memory-mapped (large cubes) instead of reading it whole.
    """

    def __init__(self, channels=None, mmap=False):
        self.channels = None if channels is None else list(channels)
        self.mmap = mmap

    def __call__(self, results):
        path = results['radar_filename']
        try:
            arr = np.load(path, mmap_mode='r' if self.mmap else None)
        except (IOError, OSError, ValueError) as err:
            raise IOError('frame {}: cannot load radar tensor {!r}: {}'.format(
                results.get('sample_idx'), path, err))
        if self.channels is not None:
            arr = arr[self.channels]
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if not np.isfinite(arr).all():
            raise ValueError('frame {}: radar tensor {!r} contains NaN or inf'.format(
                results.get('sample_idx'), path))
        results['radar'] = arr
        results['radar_shape'] = arr.shape
        return results

    def __repr__(self):
        return '{}(channels={}, mmap={})'.format(type(self).__name__, self.channels, self.mmap)


@PIPELINES.register_module()
class LoadKRadarAnnotations(object):
    """Copy ``ann_info['gt_bboxes_3d']`` ((N, 7) float32, x, y, z_bottom, dx, dy, dz, yaw) and
    ``ann_info['gt_labels_3d']`` ((N,) int64, -1 for classes outside the dataset's) into ``results``."""

    def __call__(self, results):
        ann = results['ann_info']
        results['gt_bboxes_3d'] = np.asarray(ann['gt_bboxes_3d'], dtype=np.float32).reshape(-1, 7)
        results['gt_labels_3d'] = np.asarray(ann['gt_labels_3d'], dtype=np.int64).reshape(-1)
        return results

    def __repr__(self):
        return type(self).__name__ + '()'


@PIPELINES.register_module()
class KRadarFormatBundle(object):
    """``radar`` -> ``DC(tensor, stack=True)`` (a (B, C, X, Y) batch after collate); ``gt_bboxes_3d`` and
    ``gt_labels_3d`` -> ``DC(tensor)`` (lists of per-sample tensors, moved to the device by the scatter)."""

    def __call__(self, results):
        if 'radar' in results:
            results['radar'] = DC(torch.from_numpy(results['radar']), stack=True, pad_dims=None)
        for key in ('gt_bboxes_3d', 'gt_labels_3d'):
            if key in results:
                results[key] = DC(torch.from_numpy(np.ascontiguousarray(results[key])))
        return results

    def __repr__(self):
        return type(self).__name__ + '()'
