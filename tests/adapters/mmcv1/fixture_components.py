"""Test-only mmdet components for the runner tests (imported by the test configs via custom_imports).

A tiny regression "detector" and a dataset whose ``evaluate`` scores the predictions against ground truth
read from ``data_infos`` and checks that every prediction belongs to the sample at its position. The
planted failures reproduce real ones: an exception inside ``dataset.evaluate`` (rank 0 only evaluates),
an exception in the forward pass of one rank during inference, and a validation sampler that hands every
rank the whole dataset.
"""
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from mmcv.parallel import DataContainer
from mmcv.runner import HOOKS, BaseModule, EvalHook, Hook
from mmdet.datasets import DATASETS
from mmdet.models import DETECTORS
from torch.utils.data import Dataset, SequentialSampler

IN_DIM = 4


def toy_features(index):
    """Deterministic inputs and target of sample ``index``."""
    rs = np.random.RandomState(1000 + index)
    x = rs.uniform(-1.0, 1.0, size=IN_DIM).astype(np.float32)
    target = float(x.sum() * 0.5 + 0.1 * index)
    return x, target


@DATASETS.register_module()
class ToyEvalDataset(Dataset):
    CLASSES = ('thing',)

    def __init__(self, num_samples=9, pipeline=None, test_mode=False, fail_in=None, ann_file=None):
        self.test_mode = test_mode
        self.fail_in = fail_in
        self.ann_file = ann_file or 'toy_infos.pkl'
        self.data_infos = []
        for i in range(num_samples):
            x, target = toy_features(i)
            self.data_infos.append(dict(sample_idx=i, x=x, target=target))
        self.flag = np.zeros(num_samples, dtype=np.uint8)

    def __len__(self):
        return len(self.data_infos)

    def __getitem__(self, idx):
        info = self.data_infos[idx]
        return dict(
            x=DataContainer(torch.from_numpy(info['x']), stack=True, pad_dims=None),
            target=DataContainer(torch.tensor([info['target']], dtype=torch.float32), stack=True, pad_dims=None),
            img_metas=DataContainer(dict(sample_idx=info['sample_idx']), cpu_only=True))

    def evaluate(self, results, logger=None, **kwargs):
        if self.fail_in == 'evaluate':
            raise RuntimeError('planted evaluate failure')
        if len(results) != len(self.data_infos):
            raise ValueError('got {} results for {} samples'.format(len(results), len(self.data_infos)))
        errors = []
        for info, res in zip(self.data_infos, results):
            if res['sample_idx'] != info['sample_idx']:
                raise ValueError('prediction for sample {} at position of sample {}'.format(
                    res['sample_idx'], info['sample_idx']))
            errors.append(abs(res['pred'] - info['target']))
        return {'toy/mae': float(np.mean(errors)), 'toy/num_samples': len(results),
                'toy/last_sample': int(results[-1]['sample_idx'])}


@DETECTORS.register_module()
class ToyRegressor(BaseModule):
    def __init__(self, fail_on_rank=None, pretrained=None, train_cfg=None, test_cfg=None, init_cfg=None):
        super(ToyRegressor, self).__init__(init_cfg)
        self.fail_on_rank = fail_on_rank
        self.linear = nn.Linear(IN_DIM, 1)

    def forward(self, x, img_metas, target=None, return_loss=True, rescale=False, **kwargs):
        pred = self.linear(x).squeeze(-1)
        if return_loss:
            return dict(loss=((pred - target.squeeze(-1)) ** 2).mean())
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        if self.fail_on_rank is not None and rank == self.fail_on_rank:
            raise RuntimeError('planted inference failure on rank {}'.format(rank))
        return [dict(sample_idx=m['sample_idx'], pred=float(p)) for m, p in zip(img_metas, pred)]

    def train_step(self, data, optimizer):
        loss = self(**data)['loss']
        return dict(loss=loss, log_vars=dict(loss=loss.item()), num_samples=len(data['img_metas']))

    def val_step(self, data, optimizer=None):
        return self.train_step(data, optimizer)


@HOOKS.register_module()
class WholeDatasetSamplerHook(Hook):
    """Plants a sampler bug: every rank's validation loader iterates the whole dataset."""

    def before_run(self, runner):
        from torch.utils.data import DataLoader
        for hook in runner.hooks:
            if isinstance(hook, EvalHook):
                old = hook.dataloader
                hook.dataloader = DataLoader(old.dataset, batch_size=old.batch_size,
                                             sampler=SequentialSampler(old.dataset),
                                             num_workers=0, collate_fn=old.collate_fn)
