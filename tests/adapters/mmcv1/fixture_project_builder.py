"""Test-only: a project that builds its training loaders with its own sampler, the way BEVFormer-style
projects ship their own ``build_dataloader`` (used by their own train function). Importing this module
(through a config's custom_imports) makes mmdet's and mmdet3d's train functions use the project builder,
whose shuffling sampler ignores rank and num_replicas; the validation loader stays mmdet's.
"""
import functools

import mmdet.apis.train as mmdet_train
from mmcv.parallel import collate
from torch.utils.data import DataLoader

from .fixture_pitfalls import ToyRankUnawareSampler

_original = mmdet_train.build_dataloader


def project_build_dataloader(dataset, samples_per_gpu, workers_per_gpu, num_gpus=1, dist=True, shuffle=True,
                             seed=None, runner_type='EpochBasedRunner', persistent_workers=False, **kwargs):
    if not shuffle:  # validation: the framework's own (distributed) loader
        return _original(dataset, samples_per_gpu, workers_per_gpu, num_gpus=num_gpus, dist=dist, shuffle=shuffle,
                         seed=seed, runner_type=runner_type, persistent_workers=persistent_workers, **kwargs)
    return DataLoader(dataset, batch_size=samples_per_gpu, sampler=ToyRankUnawareSampler(dataset, seed=seed or 0),
                      num_workers=workers_per_gpu, collate_fn=functools.partial(collate, samples_per_gpu=samples_per_gpu))


mmdet_train.build_dataloader = project_build_dataloader
try:
    import mmdet3d.apis.train as mmdet3d_train
    mmdet3d_train.build_mmdet_dataloader = project_build_dataloader
except ImportError:
    pass
