"""KRadarDataset: EchoFusion-format K-Radar info pickles as an mmdet dataset, with the fixed evaluator.

Registered in mmdet's ``DATASETS`` (and mmdet3d's when that imports and has its own registry) under the name
``KRadarPluginDataset``. It is not registered as ``KRadarDataset``: EchoFusion registers its own class under
that name, and mmcv's registry raises on a second registration, so whichever of the two was imported second
would break the user's config. EchoFusion users keep their class and give it our ``evaluate`` with
``adapters.mmcv1.kradar_eval_mixin.patch_dataset_evaluate('KRadarDataset')``.

``self.data_infos`` (the list loaded from ``ann_file``) is the only source of frames and GT: ``len()``,
``__getitem__``, the sampler flag and ``evaluate`` all read it, so ``dataset.data_infos =
dataset.data_infos[:N]`` gives a consistent N-frame dataset.

Importing this module also registers the pipeline steps (``pipelines``).
"""
import os.path as osp
import pickle

import numpy as np
from torch.utils.data import Dataset

from mmdet.datasets.builder import DATASETS
from mmdet.datasets.pipelines import Compose

from kradar_plugin.evaluation.protocols import ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE

from . import pipelines  # noqa: F401  (registers LoadKRadarTensor, LoadKRadarAnnotations, KRadarFormatBundle)
from ...evaluation.inputs.box_convention import LEGACY, info_annos_to_radar_boxes
from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import KRadarEvalMixin

REGISTERED_NAME = 'KRadarPluginDataset'
_REQUIRED_ANNO_KEYS = ('name', 'location', 'dimensions', 'rotation_y', 'label_file')


def annos_to_lidar_boxes(annos):
    """(N, 7) float32 LiDAR boxes (x, y, z_bottom, dx=length, dy=width, dz=height, yaw=rotation_y) from
    EchoFusion annos (location (-y, -z, x) of the box centre, dimensions (w, h, l), rotation_y in radians).
    Sizes and yaw are those of mmdet3d 0.17.3's camera -> LiDAR conversion of these annos ('mmdet3d<1.0'),
    whatever mmdet3d is installed; z is the true bottom."""
    boxes = info_annos_to_radar_boxes(annos)
    boxes[:, 2] -= 0.5 * boxes[:, 5]
    return boxes.astype(np.float32)


def load_infos(ann_file):
    """EchoFusion info list from a pickle, checked frame by frame (ValueError naming frame and field)."""
    with open(ann_file, 'rb') as f:
        infos = pickle.load(f)
    if not isinstance(infos, list):
        raise ValueError('{}: expected a list of per-frame info dicts, got {}'.format(ann_file, type(infos).__name__))
    for i, info in enumerate(infos):
        if not isinstance(info, dict) or 'annos' not in info:
            raise ValueError('{}: frame {} has no "annos" dict'.format(ann_file, i))
        annos = info['annos']
        missing = [k for k in _REQUIRED_ANNO_KEYS if k not in annos]
        if missing:
            raise ValueError('{}: frame {} annos lack {}'.format(ann_file, i, missing))
        n = len(annos['name'])
        for key, width in (('location', 3), ('dimensions', 3), ('rotation_y', None)):
            arr = np.asarray(annos[key])
            expected = (n, width) if width else (n,)
            if arr.size == 0 and n == 0:
                continue
            if arr.shape != expected:
                raise ValueError('{}: frame {} annos[{!r}] has shape {}, expected {} ({} objects)'.format(
                    ann_file, i, key, arr.shape, expected, n))
    return infos


@DATASETS.register_module(name=REGISTERED_NAME)
class KRadarDataset(KRadarEvalMixin, Dataset):
    """K-Radar frames from an EchoFusion info pickle.

    Args:
        ann_file: info pickle (relative paths are taken under ``data_root``).
        pipeline: list of pipeline step configs (mmdet ``PIPELINES``).
        data_root: dataset root; frame files live in ``data_root/<seq>/<relative path from the info>``.
        classes: evaluated / labelled classes (default ``('Sedan',)`` as in EchoFusion).
        test_mode: no annotations in the pipeline input.
        eval_protocol: default protocol of ``evaluate`` ('legacy', 'revised' or 'fixed').
        pcd_limit_range, azi_limit_range: EchoFusion's evaluation ROI (box centre; azimuth in degrees).
        radar_key: which ``info['radar']`` path the pipeline loads (``radar_filename``).
        results_dir: where ``evaluate`` saves the raw results when no ``pklfile_prefix`` is given.
        results_z_is_bottom: result boxes carry the bottom z (True: what this dataset's GT boxes teach a
            model) or the centre z (False: models trained on EchoFusion's conversion).

    ``box_convention`` is fixed to 'mmdet3d<1.0': ``annos_to_lidar_boxes`` builds the GT boxes without
    mmdet3d, with (l, w, h) sizes and yaw = rotation_y, so a model trained on them outputs that convention
    under any installed mmdet3d, and ``evaluate`` always reads results with it.
    """

    CLASSES = ('Sedan',)
    #: what this dataset's LiDAR boxes (and so its models' outputs) mean; see ``box_convention``
    box_convention = LEGACY

    def __init__(self,
                 ann_file,
                 pipeline=None,
                 data_root=None,
                 classes=None,
                 test_mode=False,
                 eval_protocol='legacy',
                 pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE,
                 azi_limit_range=ECHOFUSION_AZIMUTH_RANGE,
                 radar_key='sp_rdr_path',
                 results_dir=None,
                 results_z_is_bottom=True,
                 filter_empty_gt=False):
        self.data_root = data_root or ''
        if data_root is not None and not osp.isabs(ann_file):
            ann_file = osp.join(data_root, ann_file)
        self.ann_file = ann_file
        if classes is not None:
            self.CLASSES = tuple([classes] if isinstance(classes, str) else classes)
        self.test_mode = test_mode
        self.eval_protocol = eval_protocol
        if len(pcd_limit_range) != 6:
            raise ValueError('pcd_limit_range must have 6 values, got {}'.format(pcd_limit_range))
        if len(azi_limit_range) != 2:
            raise ValueError('azi_limit_range must have 2 values (degrees), got {}'.format(azi_limit_range))
        self.pcd_limit_range = [float(v) for v in pcd_limit_range]
        self.azi_limit_range = [float(v) for v in azi_limit_range]
        self.radar_key = radar_key
        self.results_dir = results_dir
        self.results_z_is_bottom = bool(results_z_is_bottom)
        self.data_infos = load_infos(ann_file)
        if filter_empty_gt and not test_mode:
            self.data_infos = [info for info in self.data_infos if len(info['annos']['name']) > 0]
        self.pipeline = Compose(pipeline or [])

    def __len__(self):
        return len(self.data_infos)

    @property
    def flag(self):
        """Group flag for mmdet's GroupSampler (one group); follows ``data_infos``."""
        return np.zeros(len(self.data_infos), dtype=np.uint8)

    def _frame_dir(self, info):
        return osp.join(self.data_root, info['annos']['label_file'].split(',')[0])

    def get_data_info(self, index):
        info = self.data_infos[index]
        frame_dir = self._frame_dir(info)
        radar = info.get('radar', {})
        if self.radar_key not in radar:
            raise ValueError('frame {}: info["radar"] has no {!r} (keys: {}); set radar_key'.format(
                index, self.radar_key, sorted(radar)))
        input_dict = dict(
            sample_idx=info['image']['image_idx'],
            frame_index=index,
            radar_filename=osp.join(frame_dir, radar[self.radar_key]),
            img_filename=[osp.join(frame_dir, info['image']['image_path'])],
        )
        if not self.test_mode:
            input_dict['ann_info'] = self.get_ann_info(index)
        return input_dict

    def get_ann_info(self, index):
        """GT of frame ``index``: ``gt_bboxes_3d`` (N, 7) LiDAR boxes, ``gt_labels_3d`` (index in CLASSES, -1
        for other classes), ``gt_names``."""
        annos = self.data_infos[index]['annos']
        names = np.asarray(annos['name']).reshape(-1)
        labels = np.array([self.CLASSES.index(n) if n in self.CLASSES else -1 for n in names], dtype=np.int64)
        return dict(gt_bboxes_3d=annos_to_lidar_boxes(annos), gt_labels_3d=labels, gt_names=names)

    def evaluate(self, results, *args, **kwargs):
        """``KRadarEvalMixin.evaluate`` with this dataset's fixed ``box_convention`` (an explicit
        ``box_convention=`` keyword still wins)."""
        kwargs.setdefault('box_convention', self.box_convention)
        return super(KRadarDataset, self).evaluate(results, *args, **kwargs)

    def __getitem__(self, index):
        results = self.pipeline(self.get_data_info(index))
        if results is None:
            raise ValueError('frame {}: the pipeline returned None'.format(index))
        return results

    def __repr__(self):
        return '{}(ann_file={!r}, frames={}, classes={}, test_mode={}, protocol={!r})'.format(
            type(self).__name__, self.ann_file, len(self), self.CLASSES, self.test_mode, self.eval_protocol)


def _register_in_mmdet3d():
    """mmdet3d versions with their own DATASETS registry get the class too (never required)."""
    try:
        from mmdet3d.datasets.builder import DATASETS as MMDET3D_DATASETS
    except Exception:  # absent, or refuses this mmcv version at import
        return False
    if MMDET3D_DATASETS is DATASETS or REGISTERED_NAME in MMDET3D_DATASETS.module_dict:
        return False
    MMDET3D_DATASETS.register_module(name=REGISTERED_NAME, module=KRadarDataset)
    return True


_register_in_mmdet3d()
