"""Rotated-box IoU (KITTI/mmdet3d ``rotate_iou_gpu_eval`` semantics) that never crashes."""
from .frame_blocks import frame_block_offsets, rotate_iou_frames
from .rotate_iou import rotate_iou_eval, rotate_iou_gpu_eval

__all__ = ['frame_block_offsets', 'rotate_iou_frames', 'rotate_iou_eval', 'rotate_iou_gpu_eval']
