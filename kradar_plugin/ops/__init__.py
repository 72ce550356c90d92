"""Rotated-box IoU (KITTI/mmdet3d ``rotate_iou_gpu_eval`` semantics) that never crashes."""
from .rotate_iou import rotate_iou_eval, rotate_iou_gpu_eval  # noqa: F401
