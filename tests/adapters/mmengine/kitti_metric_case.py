"""Run mmdet3d 1.x's real ``KittiMetric`` on CPU on perfect predictions of a synthetic KITTI-format set.

    python kitti_metric_case.py OUT_DIR [--plugin]

Writes ``OUT_DIR/kitti_infos_val.pkl`` (mmdet3d 1.x info layout: ``metainfo`` + ``data_list`` with
``images.CAM2`` calibration and ``instances``) and prints one JSON line ``{"metrics": {...}, "num_gt": N}``.
Without ``--plugin`` nothing of kradar_plugin is imported: the stock metric runs, as on a user's machine.
The predictions are the GT boxes themselves, converted to LiDAR boxes by mmdet3d (what a perfect LiDAR
detector outputs); the GT 2D boxes are the image projections of the 3D boxes, as KittiMetric computes them
for predictions.
"""
import json
import os
import os.path as osp
import pickle
import sys

import numpy as np

FRAMES = 10
GRID = ((7.0, -3.0), (7.0, 3.0), (13.0, 0.0), (19.0, -3.0), (19.0, 3.0))  # LiDAR (x, y) of the cars, metres
CARS_PER_FRAME = len(GRID)  # 50 GT boxes: KITTI's 40-point recall sampling reaches 100 AP with >= 40
HEIGHT, WIDTH = 375, 1242
# KITTI-like calibration: LiDAR (x forward, y left, z up) -> camera (x right, y down, z forward) with a small
# offset, and KITTI's P2 projection
LIDAR2CAM = np.array([[0., -1., 0., 0.],
                      [0., 0., -1., -0.08],
                      [1., 0., 0., -0.27],
                      [0., 0., 0., 1.]])
CAM2IMG = np.array([[721.5377, 0., 609.5593, 44.85728],
                    [0., 721.5377, 172.854, 0.2163791],
                    [0., 0., 1., 0.002745884],
                    [0., 0., 0., 1.]])


def make_infos():
    import torch
    from mmdet3d.structures import Box3DMode, LiDARInstance3DBoxes, points_cam2img
    rng = np.random.RandomState(0)
    data_list, lidar_boxes = [], []
    for frame in range(FRAMES):
        # cars ahead on a grid (no two overlap whatever their yaw) close enough that every 2D box is taller
        # than KITTI's 40 px 'easy' minimum; bottom z of a car on the road
        boxes = []
        for k, (x0, y0) in enumerate(GRID):
            x, y = x0 + rng.uniform(-0.5, 0.5), y0 + rng.uniform(-0.5, 0.5)
            length, width, height = rng.uniform(3.6, 4.6), rng.uniform(1.55, 1.9), rng.uniform(1.4, 1.7)
            yaw = rng.uniform(-np.pi, np.pi)
            boxes.append([x, y, -1.7, length, width, height, yaw])
        lidar = LiDARInstance3DBoxes(torch.tensor(boxes, dtype=torch.float32))
        cam = lidar.convert_to(Box3DMode.CAM, torch.tensor(LIDAR2CAM, dtype=torch.float32))
        corners = points_cam2img(cam.corners, torch.tensor(CAM2IMG, dtype=torch.float32))
        bbox = torch.cat([corners.min(dim=1)[0], corners.max(dim=1)[0]], dim=1).numpy()
        bbox[:, 2:] = np.minimum(bbox[:, 2:], [WIDTH, HEIGHT])
        bbox[:, :2] = np.maximum(bbox[:, :2], [0, 0])
        instances = []
        for k in range(CARS_PER_FRAME):
            c = cam.tensor[k].numpy().astype(np.float64)
            instances.append({
                'bbox': bbox[k].tolist(), 'bbox_label': 2,
                'bbox_3d': c.tolist(),  # camera box: bottom centre x, y, z, l, h, w, ry
                'bbox_label_3d': 2, 'depth': float(c[2]), 'center_2d': [0.0, 0.0], 'num_lidar_pts': 100,
                'difficulty': 0, 'truncated': 0.0, 'occluded': 0,
                'alpha': float(-np.arctan2(-boxes[k][1], boxes[k][0]) + c[6]), 'score': 0.0, 'index': k,
                'group_id': k})
        data_list.append({
            'sample_idx': frame,
            'images': {'CAM2': {'img_path': '{:06d}.png'.format(frame), 'height': HEIGHT, 'width': WIDTH,
                                'cam2img': CAM2IMG.tolist(), 'lidar2cam': LIDAR2CAM.tolist(),
                                'lidar2img': (CAM2IMG @ LIDAR2CAM).tolist()}},
            'lidar_points': {'num_pts_feats': 4, 'lidar_path': '{:06d}.bin'.format(frame)},
            'instances': instances,
        })
        lidar_boxes.append(lidar)
    metainfo = {'categories': {'Pedestrian': 0, 'Cyclist': 1, 'Car': 2}, 'dataset': 'kitti',
                'info_version': '1.1'}
    return {'metainfo': metainfo, 'data_list': data_list}, lidar_boxes


def main():
    out_dir = sys.argv[1]
    if '--plugin' in sys.argv[2:]:
        import kradar_plugin  # noqa: F401  (what custom_imports = ['kradar_plugin'] does)
    import torch
    from mmengine.structures import InstanceData
    from mmdet3d.evaluation.metrics import KittiMetric
    from mmdet3d.structures import Det3DDataSample

    infos, lidar_boxes = make_infos()
    os.makedirs(out_dir, exist_ok=True)
    ann_file = osp.join(out_dir, 'kitti_infos_val.pkl')
    with open(ann_file, 'wb') as f:
        pickle.dump(infos, f)
    metric = KittiMetric(ann_file=ann_file, metric='bbox')
    metric.dataset_meta = {'classes': ['Pedestrian', 'Cyclist', 'Car']}
    samples = []
    for frame, boxes in enumerate(lidar_boxes):
        sample = Det3DDataSample()
        pred = InstanceData()
        pred.bboxes_3d = boxes
        pred.scores_3d = torch.linspace(0.9, 0.5, len(boxes))
        pred.labels_3d = torch.full((len(boxes),), 2, dtype=torch.long)
        sample.pred_instances_3d = pred
        sample.pred_instances = InstanceData()
        sample.set_metainfo({'sample_idx': frame})
        samples.append(sample.to_dict())
    metric.process({}, samples)
    metrics = metric.evaluate(len(samples))
    print(json.dumps({'metrics': metrics, 'num_gt': sum(len(b) for b in lidar_boxes)}))


if __name__ == '__main__':
    main()
