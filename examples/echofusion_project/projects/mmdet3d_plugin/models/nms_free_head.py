"""An anchor head without NMS at inference, as EchoFusion's own head is NMS-free.

mmdet3d's ``Anchor3DHead`` ends its inference in ``box3d_multiclass_nms``, which in mmdet3d 0.17.x calls
the CUDA-only ``iou3d.nms_gpu`` (mmdet3d 1.0 calls mmcv's ``nms_bev``, also CUDA-only in mmcv-full 1.4):
on a CPU machine the evaluation would stop there. This head keeps the ``max_num`` highest-scoring decoded
anchors above ``score_thr`` instead, with the head's own direction correction, and builds the boxes in the
installed mmdet3d's box type. Training is ``Anchor3DHead``'s.
"""
import numpy as np
import torch
from mmdet3d.core.bbox import limit_period
from mmdet3d.models.builder import HEADS
from mmdet3d.models.dense_heads import Anchor3DHead


@HEADS.register_module()
class NMSFreeAnchor3DHead(Anchor3DHead):
    """``Anchor3DHead`` whose ``get_bboxes_single`` keeps the top-scoring boxes without NMS."""

    def get_bboxes_single(self, cls_scores, bbox_preds, dir_cls_preds, mlvl_anchors, input_meta, cfg=None,
                          rescale=False):
        cfg = self.test_cfg if cfg is None else cfg
        boxes, scores, directions = [], [], []
        for cls_score, bbox_pred, dir_cls_pred, anchors in zip(cls_scores, bbox_preds, dir_cls_preds,
                                                                mlvl_anchors):
            score = cls_score.permute(1, 2, 0).reshape(-1, self.num_classes)
            score = score.sigmoid() if self.use_sigmoid_cls else score.softmax(-1)[:, :self.num_classes]
            deltas = bbox_pred.permute(1, 2, 0).reshape(-1, self.box_code_size)
            boxes.append(self.bbox_coder.decode(anchors, deltas))
            scores.append(score)
            directions.append(dir_cls_pred.permute(1, 2, 0).reshape(-1, 2).argmax(dim=-1))
        boxes, scores, directions = torch.cat(boxes), torch.cat(scores), torch.cat(directions)
        best, labels = scores.max(dim=1)
        keep = torch.nonzero(best > cfg.get('score_thr', 0), as_tuple=False).flatten()
        keep = keep[best[keep].argsort(descending=True)[:cfg.get('max_num', keep.numel())]]
        boxes, best, labels, directions = boxes[keep], best[keep], labels[keep], directions[keep]
        if boxes.shape[0] > 0:
            yaw = limit_period(boxes[:, 6] - self.dir_offset, self.dir_limit_offset, np.pi)
            boxes[:, 6] = yaw + self.dir_offset + np.pi * directions.to(boxes.dtype)
        return input_meta['box_type_3d'](boxes, box_dim=self.box_code_size), best, labels
