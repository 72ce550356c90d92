"""Test-only components that build the distributed pitfalls of issue 11 for real (imported by the pitfall
configs through custom_imports, and directly by the in-process tests).

- ``ToyPipelineDataset``: ToyEvalDataset whose samples go through a real mmdet ``Compose`` pipeline;
- ``ToyScaleLambda`` keeps a lambda on the transform (pickles under fork, not under spawn/forkserver);
  ``ToyScale`` does the same with a module-level function (pickles everywhere);
- ``ToyCudaTouch`` moves each sample's tensor to CUDA in the worker (on a machine without a GPU the call
  still goes through torch's CUDA initialisation, which fails; the transform then keeps the CPU tensor, so
  the worker's attempt is what the probe sees);
- ``ToyTwoHeadRegressor``: the toy regressor with an auxiliary head that never reaches the loss;
- ``ToyRankUnawareSampler``: a shuffling sampler that ignores rank and num_replicas;
- ``SaveWrappedStateDictHook``: at the end of a run rank 0 saves ``runner.model.state_dict()`` -- in a
  multi-process run the DDP wrapper's, every key prefixed with ``module.``.
"""
import functools
import os.path as osp

import numpy as np
import torch
import torch.nn as nn
from mmcv.parallel import DataContainer
from mmcv.runner import HOOKS, Hook, get_dist_info
from mmdet.datasets import DATASETS, PIPELINES
from mmdet.datasets.pipelines import Compose
from mmdet.models import DETECTORS
from torch.utils.data import Sampler

from .fixture_components import ToyEvalDataset, ToyRegressor


def scale(x, factor=1.0):
    return x * factor


@PIPELINES.register_module()
class ToyScale(object):
    """Multiplies the features by ``factor`` (a module-level function: pickles)."""

    def __init__(self, factor=1.0):
        self.fn = functools.partial(scale, factor=factor)

    def __call__(self, results):
        results['x'] = self.fn(results['x'])
        return results


@PIPELINES.register_module()
class ToyScaleLambda(object):
    """Multiplies the features by ``factor`` through a lambda kept on the transform (does not pickle)."""

    def __init__(self, factor=1.0):
        self.fn = lambda x: x * factor

    def __call__(self, results):
        results['x'] = self.fn(results['x'])
        return results


@PIPELINES.register_module()
class ToyCudaTouch(object):
    """Moves the features to the GPU inside the data pipeline (i.e. inside DataLoader workers)."""

    def __call__(self, results):
        try:
            results['x'] = torch.from_numpy(results['x']).cuda().cpu().numpy()
        except (AssertionError, RuntimeError):  # no CUDA here: the attempt happened, keep the CPU array
            pass
        return results


@DATASETS.register_module()
class ToyPipelineDataset(ToyEvalDataset):
    """ToyEvalDataset whose features go through ``pipeline`` (mmdet Compose)."""

    def __init__(self, num_samples=9, pipeline=None, test_mode=False, fail_in=None, ann_file=None):
        super(ToyPipelineDataset, self).__init__(num_samples, None, test_mode, fail_in, ann_file)
        self.pipeline = Compose(pipeline or [])

    def __getitem__(self, idx):
        info = self.data_infos[idx]
        results = self.pipeline(dict(x=info['x'].copy()))
        return dict(
            x=DataContainer(torch.from_numpy(np.asarray(results['x'], dtype=np.float32)), stack=True,
                            pad_dims=None),
            target=DataContainer(torch.tensor([info['target']], dtype=torch.float32), stack=True, pad_dims=None),
            img_metas=DataContainer(dict(sample_idx=info['sample_idx']), cpu_only=True))


@DETECTORS.register_module()
class ToyTwoHeadRegressor(ToyRegressor):
    """ToyRegressor plus an auxiliary head that is built but never used in the loss."""

    def __init__(self, **kwargs):
        super(ToyTwoHeadRegressor, self).__init__(**kwargs)
        self.aux_head = nn.Linear(4, 3)


class ToyRankUnawareSampler(Sampler):
    """Shuffles the whole dataset on every rank (ignores rank and num_replicas)."""

    def __init__(self, dataset, num_replicas=None, rank=None, seed=0):
        self.dataset = dataset
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.seed + self.epoch)
        return iter(torch.randperm(len(self.dataset), generator=g).tolist())

    def __len__(self):
        return len(self.dataset)


@HOOKS.register_module()
class SaveWrappedStateDictHook(Hook):
    """Rank 0 saves the state dict of the runner's model AS WRAPPED (DDP: ``module.`` prefixes)."""

    def __init__(self, filename='wrapped_state_dict.pth'):
        self.filename = filename

    def after_run(self, runner):
        if get_dist_info()[0] == 0:
            torch.save({'meta': dict(epoch=runner.epoch, iter=runner.iter),
                        'state_dict': runner.model.state_dict()}, osp.join(runner.work_dir, self.filename))
