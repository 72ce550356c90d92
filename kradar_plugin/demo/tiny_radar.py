"""TinyRadarPeakDetector: a deterministic BEV peak detector with a few learnable box parameters.

Made for the demo data (``kradar_plugin.demo.data``): the radar tensor ``(C, X, Y)`` holds a power
map (channel 0) where every object is a Gaussian peak elongated along its heading, and an elevation map
(channel 1). The detector

1. finds local maxima of the power map (3x3) above ``score_thr`` (at most ``max_num`` per sample, strongest
   first; the peak value is the score);
2. refines each centre and measures its heading from the half-maximum weighted moments of a
   ``(2 * window + 1)``-cell patch (yaw is the orientation of the major axis);
3. picks the anchor class whose prior length is closest to the measured length (for a Gaussian with
   sigma = length / 4, the half-maximum weighted standard deviation along the major axis is
   ``0.1166 * length``); peaks of anchor classes that are not in ``classes`` are dropped;
4. outputs LiDAR boxes ``(x, y, z_bottom, dx, dy, dz, yaw)`` with ``dx`` the length along ``yaw``, sizes and a
   height offset per anchor class and a yaw offset being the learnable parameters.

So it gives meaningful detections with its initial parameters (no checkpoint), runs in about a millisecond
per sample on a CPU, and a training step is a real backward pass (L1 size / height losses and a
pi-periodic yaw loss on peaks matched to ground truth). All parameters always enter the loss, so DDP works
without ``find_unused_parameters``.
"""
import math

import numpy as np
import torch
from torch import nn

from mmdet.models.builder import DETECTORS
from mmdet.models.detectors.base import BaseDetector

# std of a Gaussian's half-maximum weighted moment along an axis, as a fraction of sigma (derived in
# closed form: E[u^2] = (1 - ln2 - (ln2)^2 / 2) / (2 * (1/2 - ln2 / 2)) sigma^2).
_HALF_MAX_STD_PER_SIGMA = math.sqrt((1.0 - math.log(2.0) - 0.5 * math.log(2.0) ** 2) /
                                    (2.0 * (0.5 - 0.5 * math.log(2.0))))


def find_peaks(heat, score_thr, max_num):
    """Local maxima (3x3, ties kept once: first in row-major order) of a (X, Y) array above score_thr.
    Returns (rows, cols, values) sorted by value descending, then by position (deterministic)."""
    nx, ny = heat.shape
    padded = np.full((nx + 2, ny + 2), -np.inf, dtype=heat.dtype)
    padded[1:-1, 1:-1] = heat
    neigh = np.stack([padded[1 + di:nx + 1 + di, 1 + dj:ny + 1 + dj]
                      for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)])
    # strictly greater than the neighbours before (row-major), >= the ones after: one peak per plateau
    before = neigh[:4].max(axis=0)
    after = neigh[4:].max(axis=0)
    mask = (heat > before) & (heat >= after) & (heat > score_thr)
    rows, cols = np.nonzero(mask)
    values = heat[rows, cols]
    order = np.lexsort((cols, rows, -values))[:max_num]
    return rows[order], cols[order], values[order]


def peak_moments(heat, row, col, window, grid):
    """Half-maximum weighted centroid (x, y), major-axis angle and major-axis std (metres) of one peak."""
    nx, ny = heat.shape
    r0, r1 = max(row - window, 0), min(row + window + 1, nx)
    c0, c1 = max(col - window, 0), min(col + window + 1, ny)
    w = np.maximum(heat[r0:r1, c0:c1].astype(np.float64) - 0.5 * float(heat[row, col]), 0.0)
    xs = grid['x_min'] + (np.arange(r0, r1) + 0.5) * grid['cell']
    ys = grid['y_min'] + (np.arange(c0, c1) + 0.5) * grid['cell']
    gx, gy = np.meshgrid(xs, ys, indexing='ij')
    total = w.sum()
    if total <= 0:  # flat patch: the cell centre, no orientation
        return xs[row - r0], ys[col - c0], 0.0, 0.0
    mx, my = (w * gx).sum() / total, (w * gy).sum() / total
    sxx = (w * (gx - mx) ** 2).sum() / total
    syy = (w * (gy - my) ** 2).sum() / total
    sxy = (w * (gx - mx) * (gy - my)).sum() / total
    angle = 0.5 * math.atan2(2.0 * sxy, sxx - syy)
    half_tr = 0.5 * (sxx + syy)
    major = half_tr + math.sqrt(max(half_tr ** 2 - (sxx * syy - sxy ** 2), 0.0))
    return mx, my, angle, math.sqrt(major)


@DETECTORS.register_module()
class TinyRadarPeakDetector(BaseDetector):
    """Peak-finding BEV detector for the demo radar tensor; see the module docstring.

    Args:
        classes: output class names (label i is ``classes[i]``), normally the dataset's classes.
        anchor_classes / anchor_sizes: every class the detector can tell apart and its prior (l, w, h).
        grid: BEV grid of the input tensor (``x_min``, ``y_min``, ``cell``; as in ``demo_data.DEMO_GRID``).
        score_thr, max_num, window: peak threshold, peaks per sample, half size of the moment patch (cells).
        match_dist: metres between a peak and a GT centre for the training losses.
        output: 'flat' (``boxes_3d``, ``scores_3d``, ``labels_3d``) or 'pts_bbox' (the same under 'pts_bbox').
    """

    def __init__(self,
                 classes=('Sedan',),
                 anchor_classes=('Sedan', 'Bus or Truck'),
                 anchor_sizes=((4.5, 1.85, 1.55), (10.0, 2.55, 3.15)),
                 grid=None,
                 power_channel=0,
                 elevation_channel=1,
                 score_thr=0.1,
                 max_num=20,
                 window=6,
                 match_dist=1.5,
                 output='flat',
                 train_cfg=None,
                 test_cfg=None,
                 init_cfg=None,
                 pretrained=None):
        super(TinyRadarPeakDetector, self).__init__(init_cfg=init_cfg)
        if len(anchor_classes) != len(anchor_sizes):
            raise ValueError('anchor_classes ({}) and anchor_sizes ({}) differ in length'.format(
                len(anchor_classes), len(anchor_sizes)))
        unknown = [c for c in classes if c not in anchor_classes]
        if unknown:
            raise ValueError('classes {} have no entry in anchor_classes {}'.format(unknown, anchor_classes))
        if output not in ('flat', 'pts_bbox'):
            raise ValueError("output must be 'flat' or 'pts_bbox', got {!r}".format(output))
        self.classes = tuple(classes)
        self.anchor_classes = tuple(anchor_classes)
        self.grid = dict(grid or {'x_min': 0.0, 'y_min': -16.0, 'cell': 0.5})
        self.power_channel = power_channel
        self.elevation_channel = elevation_channel
        self.score_thr = float(score_thr)
        self.max_num = int(max_num)
        self.window = int(window)
        self.match_dist = float(match_dist)
        self.output = output
        sizes = torch.tensor(anchor_sizes, dtype=torch.float32)
        if sizes.dim() != 2 or sizes.shape[1] != 3 or not bool((sizes > 0).all()):
            raise ValueError('anchor_sizes must be positive (l, w, h) triples, got {}'.format(anchor_sizes))
        self.prior_lengths = [float(s[0]) for s in anchor_sizes]
        # learnable: log sizes per anchor class, elevation offset per anchor class, a global yaw offset
        self.log_sizes = nn.Parameter(sizes.log())
        self.z_offsets = nn.Parameter(torch.zeros(len(anchor_classes)))
        self.yaw_offset = nn.Parameter(torch.zeros(1))

    # ---- peaks -> per-sample candidate list (no gradient) ----
    def _candidates(self, radar):
        """For each sample: list of (x, y, angle, z_centre, score, anchor_index)."""
        if radar.dim() != 4:
            raise ValueError('radar tensor must be (B, C, X, Y), got shape {}'.format(tuple(radar.shape)))
        arr = radar.detach().float().cpu().numpy()
        out = []
        for sample in arr:
            heat, elev = sample[self.power_channel], sample[self.elevation_channel]
            rows, cols, values = find_peaks(heat, self.score_thr, self.max_num)
            cands = []
            for r, c, v in zip(rows, cols, values):
                x, y, angle, std_major = peak_moments(heat, int(r), int(c), self.window, self.grid)
                length = std_major / (_HALF_MAX_STD_PER_SIGMA / 4.0)
                anchor = int(np.argmin([abs(length - p) for p in self.prior_lengths]))
                cands.append((x, y, angle, float(elev[r, c]), float(v), anchor))
            out.append(cands)
        return out

    def extract_feat(self, radar):
        """The candidate peaks are this detector's features."""
        return self._candidates(radar)

    def _boxes(self, cands, device):
        """(N, 7) LiDAR boxes (differentiable w.r.t. the parameters), scores, anchor indices."""
        if not cands:
            return (self.log_sizes.new_zeros((0, 7)), self.log_sizes.new_zeros((0,)),
                    torch.zeros((0,), dtype=torch.long, device=device))
        c = torch.tensor([[k[0], k[1], k[2], k[3], k[4]] for k in cands], dtype=torch.float32, device=device)
        anchors = torch.tensor([k[5] for k in cands], dtype=torch.long, device=device)
        sizes = self.log_sizes.exp()[anchors]                      # (N, 3) l, w, h
        z_centre = c[:, 3] + self.z_offsets[anchors]
        yaw = c[:, 2] + self.yaw_offset
        boxes = torch.stack([c[:, 0], c[:, 1], z_centre - 0.5 * sizes[:, 2],
                             sizes[:, 0], sizes[:, 1], sizes[:, 2], yaw], dim=1)
        return boxes, c[:, 4], anchors

    # ---- mmdet BaseDetector interface ----
    def forward(self, radar, img_metas, return_loss=True, **kwargs):
        """``radar``: (B, C, X, Y) tensor (a list of one such tensor at test time is accepted too)."""
        if return_loss:
            return self.forward_train(radar, img_metas, **kwargs)
        return self.forward_test(radar, img_metas, **kwargs)

    def forward_train(self, radar, img_metas, gt_bboxes_3d=None, gt_labels_3d=None, **kwargs):
        """Losses of the learnable parameters on peaks matched to GT boxes ``(M, 7)`` (x, y, z_bottom, dx, dy,
        dz, yaw) whose label names an anchor class (labels index ``self.classes``; -1 = other class)."""
        if gt_bboxes_3d is None or gt_labels_3d is None:
            raise ValueError('forward_train needs gt_bboxes_3d and gt_labels_3d')
        device = self.log_sizes.device
        size_terms, z_terms, yaw_terms = [], [], []
        for cands, gt, labels in zip(self._candidates(radar), gt_bboxes_3d, gt_labels_3d):
            gt = getattr(gt, 'tensor', gt).to(device=device, dtype=torch.float32)
            boxes, _, anchors = self._boxes(cands, device)
            for k in range(gt.shape[0]):
                label = int(labels[k])
                if label < 0 or label >= len(self.classes) or boxes.shape[0] == 0:
                    continue
                anchor = self.anchor_classes.index(self.classes[label])
                dist = torch.hypot(boxes[:, 0] - gt[k, 0], boxes[:, 1] - gt[k, 1]).detach()
                dist[anchors != anchor] = float('inf')
                j = int(torch.argmin(dist))
                if float(dist[j]) > self.match_dist:
                    continue
                size_terms.append((boxes[j, 3:6].log() - gt[k, 3:6].clamp(min=1e-3).log()).abs().sum())
                z_terms.append(((boxes[j, 2] + 0.5 * boxes[j, 5]) - (gt[k, 2] + 0.5 * gt[k, 5])).abs())
                yaw_terms.append(1.0 - torch.cos(2.0 * (boxes[j, 6] - gt[k, 6])))
        # every parameter enters every loss (zero weight when nothing matched) so DDP sees all gradients
        anchor_all = 0.0 * (self.log_sizes.sum() + self.z_offsets.sum() + self.yaw_offset.sum())

        def mean(terms):
            return torch.stack(terms).mean() + anchor_all if terms else anchor_all

        return dict(loss_size=mean(size_terms), loss_z=mean(z_terms), loss_yaw=mean(yaw_terms))

    def forward_test(self, radar, img_metas, **kwargs):
        if isinstance(radar, (list, tuple)):  # mmdet test-time-augmentation layout: one augmentation only
            if len(radar) != 1:
                raise ValueError('TinyRadarPeakDetector supports one test augmentation, got {}'.format(
                    len(radar)))
            radar, img_metas = radar[0], img_metas[0]
        return self.simple_test(radar, img_metas, **kwargs)

    def simple_test(self, radar, img_metas, rescale=False, **kwargs):
        """Per sample ``{'boxes_3d': (N, 7), 'scores_3d': (N,), 'labels_3d': (N,)}`` CPU tensors (under
        'pts_bbox' when ``output='pts_bbox'``)."""
        results = []
        device = self.log_sizes.device
        with torch.no_grad():
            for cands in self._candidates(radar):
                boxes, scores, anchors = self._boxes(cands, device)
                names = [self.anchor_classes[int(a)] for a in anchors]
                keep = [i for i, n in enumerate(names) if n in self.classes]
                labels = torch.tensor([self.classes.index(names[i]) for i in keep], dtype=torch.long)
                keep_t = torch.tensor(keep, dtype=torch.long, device=device)
                res = dict(boxes_3d=boxes[keep_t].detach().cpu(), scores_3d=scores[keep_t].detach().cpu(),
                           labels_3d=labels)
                results.append(dict(pts_bbox=res) if self.output == 'pts_bbox' else res)
        return results

    def aug_test(self, radars, img_metas, **kwargs):
        raise NotImplementedError('TinyRadarPeakDetector has no test-time augmentation')
