"""Writes the checkpoint fixtures of test_checkpoint_meta.py with the real ``torch.save`` (run with a torch env).

    .venv/bin/python tests/doctor/data/make_checkpoints.py

- ``mmdet3d_0.17.3_zip.pth``: what mmcv 1.x's runner saves after mmdet3d 0.17.3's tools/train.py set
  checkpoint_config.meta (mmdet_version, mmseg_version, mmdet3d_version, config, CLASSES, PALETTE) plus the
  runner's own mmcv_version/time, a state_dict of tensors and an optimizer state, in torch's zip format.
- ``mmdet3d_1.0.0rc6_legacy.pth``: the same for mmdet3d 1.0.0rc6, in torch's legacy (non-zip) format.
- ``mmengine_0.10.7_zip.pth``: what an mmengine runner saves (meta with mmengine_version and no mmdet3d
  version; the message hub holds mmengine.logging.history_buffer.HistoryBuffer objects, which the reader must
  not import).
- ``no_meta_zip.pth``: a bare state_dict.
"""
import collections
import os
import sys
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def state_dict():
    return collections.OrderedDict([('backbone.weight', torch.arange(6, dtype=torch.float32).reshape(2, 3)),
                                    ('backbone.bias', torch.zeros(2))])


def mmcv_checkpoint(mmdet3d_version, mmdet_version, mmseg_version):
    return {
        'meta': {'mmdet_version': mmdet_version, 'mmseg_version': mmseg_version,
                 'mmdet3d_version': mmdet3d_version, 'config': "model = dict(type='VoxelNet')\n",
                 'CLASSES': ('Sedan', 'Bus or Truck'), 'PALETTE': None, 'epoch': 12, 'iter': 3000,
                 'mmcv_version': '1.7.0', 'time': 'Sun Nov 23 13:00:00 2026',
                 'hook_msgs': {'last_ckpt': 'work_dirs/x/epoch_12.pth', 'best_score': np.float64(0.5)}},
        'state_dict': state_dict(),
        'optimizer': {'state': {0: {'momentum_buffer': torch.ones(2, 3)}}, 'param_groups': [{'lr': 0.01}]},
    }


def mmengine_checkpoint():
    # A stand-in module named like mmengine's, so that the pickle names mmengine's real global.
    module = types.ModuleType('mmengine.logging.history_buffer')

    class HistoryBuffer(object):
        def __init__(self, values):
            self._log_history = np.asarray(values)
    HistoryBuffer.__module__ = module.__name__
    HistoryBuffer.__qualname__ = 'HistoryBuffer'
    module.HistoryBuffer = HistoryBuffer
    for name in ('mmengine', 'mmengine.logging', 'mmengine.logging.history_buffer'):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules['mmengine.logging.history_buffer'] = module
    return {
        'meta': {'epoch': 12, 'iter': 3000, 'cfg': "model = dict(type='PointPillars')\n", 'seed': 0,
                 'experiment_name': 'pointpillars_kradar', 'time': '20261123_130000',
                 'mmengine_version': '0.10.7', 'dataset_meta': {'classes': ('Sedan',)}},
        'state_dict': state_dict(),
        'message_hub': {'log_scalars': {'train/loss': HistoryBuffer([1.0, 0.5])}, 'runtime_info': {'epoch': 12}},
    }


def main():
    torch.save(mmcv_checkpoint('0.17.3', '2.19.0', '0.20.0'), os.path.join(HERE, 'mmdet3d_0.17.3_zip.pth'))
    torch.save(mmcv_checkpoint('1.0.0rc6', '2.28.2', '0.30.0'), os.path.join(HERE, 'mmdet3d_1.0.0rc6_legacy.pth'),
               _use_new_zipfile_serialization=False)
    torch.save(mmengine_checkpoint(), os.path.join(HERE, 'mmengine_0.10.7_zip.pth'))
    torch.save(state_dict(), os.path.join(HERE, 'no_meta_zip.pth'))
    print('torch %s wrote the fixtures in %s' % (torch.__version__, HERE))


if __name__ == '__main__':
    main()
