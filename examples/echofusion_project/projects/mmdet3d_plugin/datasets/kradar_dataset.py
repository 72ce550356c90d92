"""The project's K-Radar dataset, shaped like EchoFusion's: a ``KittiDataset`` subclass registered in mmdet's
``DATASETS`` as ``KRadarDataset`` that reads EchoFusion's info pickles.

Info layout (per frame): ``image`` (``image_idx``, ``image_path``, ``image_shape``), ``radar`` (relative
paths of the radar representations), ``calib`` (``R0_rect``, ``Tr_velo_to_cam``, ``P2``) and ``annos``
(``name``, ``location`` (-y, -z, x) of the box centre, ``dimensions``, ``rotation_y``, ``bbox``,
``truncated``, ``occluded``, ``alpha``, ``label_file`` "seq,label"). Files live in ``data_root/<seq>/``.

Evaluation follows EchoFusion's flow: mmdet3d's own ``format_results`` (``bbox2result_kitti`` through this
class's ``convert_valid_bboxes``), then ``format_anno`` (EchoFusion's ROI: box centre inside
``pcd_limit_range`` and azimuth inside ``azi_limit_range``; frames without valid GT dropped; x/y of the
location negated and the dimensions reordered for the K-Radar evaluator), then ``kradar_eval``.
"""
import copy
import os.path as osp

import numpy as np
import torch
from mmcv.utils import print_log
from mmdet.datasets import DATASETS
from mmdet3d.core.bbox import Box3DMode, CameraInstance3DBoxes
from mmdet3d.datasets import KittiDataset

# info 'location' (-y, -z, x) -> (x, y, z) in the radar frame
_CAM_TO_RADAR = np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], dtype=np.float64)
# EchoFusion writes no real 2D boxes: every prediction gets this one
_FAKE_BOX_2D = [50, 50, 150, 150]
_RADAR_KEYS = ('ds_rdr_path', 'sp_rdr_path', 'ds_pcd_path', 'ra_path')


@DATASETS.register_module()
class KRadarDataset(KittiDataset):
    """K-Radar frames in EchoFusion's info layout.

    Args (as EchoFusion's): data_root, ann_file, split, pts_prefix, radar_prefix (the radar file whose
    relative path contains this string is loaded), pipeline, classes, modality, box_type_3d,
    filter_empty_gt, test_mode, azi_limit_range (degrees), pcd_limit_range.
    """
    CLASSES = ('Sedan',)

    def __init__(self,
                 data_root,
                 ann_file,
                 split='',
                 pts_prefix='os2-64',
                 radar_prefix='sp_rdr_cube',
                 pipeline=None,
                 classes=None,
                 modality=None,
                 box_type_3d='LiDAR',
                 filter_empty_gt=True,
                 test_mode=False,
                 azi_limit_range=(-50, 50),
                 pcd_limit_range=(0, -6.4, -2.0, 72.0, 6.4, 6.0)):
        super(KRadarDataset, self).__init__(
            data_root=data_root, ann_file=ann_file, split=split, pts_prefix=pts_prefix, pipeline=pipeline,
            classes=classes, modality=modality, box_type_3d=box_type_3d, filter_empty_gt=filter_empty_gt,
            test_mode=test_mode, pcd_limit_range=list(pcd_limit_range))
        self.radar_prefix = radar_prefix
        self.max_azimtuth_rad = [azi_limit_range[0] * np.pi / 180., azi_limit_range[1] * np.pi / 180.]

    def _radar_filename(self, info, seq):
        radar = info['radar']
        keys = [k for k in _RADAR_KEYS if k in radar] + sorted(k for k in radar if k not in _RADAR_KEYS)
        for key in keys:
            if self.radar_prefix in radar[key]:
                return osp.join(self.data_root, seq, radar[key])
        raise KeyError('frame {}: no radar path contains {!r} ({})'.format(
            info['image']['image_idx'], self.radar_prefix, radar))

    def get_data_info(self, index):
        info = self.data_infos[index]
        seq = info['annos']['label_file'].split(',')[0]
        rect = info['calib']['R0_rect'].astype(np.float32)
        trv2c = info['calib']['Tr_velo_to_cam'].astype(np.float32)
        p2 = info['calib']['P2'].astype(np.float32)
        input_dict = dict(
            sample_idx=info['image']['image_idx'],
            pts_filename=None,
            radar_filename=self._radar_filename(info, seq),
            img_prefix=None,
            img_filename=[osp.join(self.data_root, seq, info['image']['image_path'])],
            lidar2img=p2 @ rect @ trv2c,
            Trv2c=trv2c)
        if not self.test_mode:
            input_dict['ann_info'] = self.get_ann_info(index)
        return input_dict

    def get_ann_info(self, index):
        """GT of one frame: camera boxes of the info converted to ``box_type_3d`` by the installed mmdet3d."""
        annos = dict(self.data_infos[index]['annos'])
        annos.pop('label_file', None)
        annos = self.remove_dontcare(annos)
        boxes = np.concatenate([annos['location'], annos['dimensions'],
                                np.asarray(annos['rotation_y'])[:, None]], axis=1).astype(np.float32)
        gt_bboxes_3d = CameraInstance3DBoxes(boxes).convert_to(self.box_mode_3d, None)
        names = annos['name']
        gt_labels = np.array([self.CLASSES.index(n) if n in self.CLASSES else -1 for n in names],
                             dtype=np.int64)
        return dict(gt_bboxes_3d=gt_bboxes_3d, gt_labels_3d=copy.deepcopy(gt_labels),
                    bboxes=annos['bbox'].astype(np.float32), labels=gt_labels, gt_names=names)

    def convert_valid_bboxes(self, box_dict, info):
        """Predictions kept for evaluation: box centre inside ``pcd_limit_range``; the fake 2D box."""
        box_preds = box_dict['boxes_3d']
        scores = box_dict['scores_3d']
        labels = box_dict['labels_3d']
        sample_idx = info['image']['image_idx']
        empty = dict(bbox=np.zeros([0, 4]), box3d_camera=np.zeros([0, 7]), box3d_lidar=np.zeros([0, 7]),
                     scores=np.zeros([0]), label_preds=np.zeros([0, 4]), sample_idx=sample_idx)
        if len(box_preds) == 0:
            return empty
        box_preds_camera = box_preds.convert_to(Box3DMode.CAM, None)
        box_2d = torch.tensor([_FAKE_BOX_2D] * len(box_preds), dtype=torch.float32)
        limit = box_preds.tensor.new_tensor(self.pcd_limit_range)
        valid = ((box_preds.center > limit[:3]) & (box_preds.center < limit[3:])).all(-1)
        if valid.sum() == 0:
            return empty
        return dict(bbox=box_2d[valid].numpy(), box3d_camera=box_preds_camera[valid].tensor.numpy(),
                    box3d_lidar=box_preds[valid].tensor.numpy(), scores=scores[valid].numpy(),
                    label_preds=labels[valid].numpy(), sample_idx=sample_idx)

    def format_anno(self, results):
        """(gt_list, dt_list, kept frame indices): EchoFusion's ROI on the GT, frames without valid GT
        dropped, both sides turned into the K-Radar evaluator's axes."""
        gt_list, dt_list, kept = [], [], []
        min_azi, max_azi = self.max_azimtuth_rad
        lo = np.asarray(self.pcd_limit_range[:3])
        hi = np.asarray(self.pcd_limit_range[3:])
        for idx, info in enumerate(self.data_infos):
            anno = dict(info['annos'])
            anno.pop('label_file', None)
            centres = np.asarray(anno['location'], dtype=np.float64).reshape(-1, 3) @ _CAM_TO_RADAR.T
            azimuth = np.arctan2(centres[:, 1], centres[:, 0])
            valid = ((centres > lo) & (centres < hi)).all(-1) & (azimuth > min_azi) & (azimuth < max_azi)
            valid &= np.array([n in self.CLASSES for n in anno['name']], dtype=bool).reshape(-1)
            if valid.sum() == 0:
                continue
            anno = {key: np.asarray(value)[valid] for key, value in anno.items()}
            anno['location'][:, [0, 1]] *= -1
            anno['dimensions'] = anno['dimensions'][:, [2, 1, 0]]
            det = dict(results[idx])
            det['location'] = np.array(det['location'], dtype=np.float64).reshape(-1, 3)
            det['location'][:, [0, 1]] *= -1
            det['dimensions'] = np.asarray(det['dimensions']).reshape(-1, 3)[:, [2, 1, 0]]
            gt_list.append(anno)
            dt_list.append(det)
            kept.append(idx)
        return gt_list, dt_list, kept

    def evaluate(self,
                 results,
                 metric=None,
                 logger=None,
                 pklfile_prefix=None,
                 submission_prefix=None,
                 show=False,
                 out_dir=None,
                 pipeline=None):
        """K-Radar evaluation (EchoFusion's flow); returns ``{'<branch>/kradar/<Class>_<BEV|3D|2D>_...':
        AP}`` rounded to 4 decimals."""
        from .utils import kradar_eval
        # like EchoFusion: the pickle under pklfile_prefix, no KITTI submission files
        result_files, tmp_dir = self.format_results(results, pklfile_prefix)
        ap_dict = dict()
        for name, branch in result_files.items():
            gt_annos, dt_annos, _ = self.format_anno(branch)
            eval_types = ['bbox'] if 'img' in name else ['bbox', 'bev', '3d']
            result_str, branch_dict = kradar_eval(gt_annos, dt_annos, self.CLASSES, eval_types=eval_types)
            for key, value in branch_dict.items():
                ap_dict['{}/{}'.format(name, key)] = float('{:.4f}'.format(value))
            print_log('Results of {}:\n{}'.format(name, result_str), logger=logger)
        if tmp_dir is not None:
            tmp_dir.cleanup()
        if show:
            self.show(results, out_dir, pipeline=pipeline)
        return ap_dict
