"""``--eval-samples N``: evaluate on the first N validation samples, with ground truth that matches.

The subset is a shallow copy of the dataset whose per-sample lists are cut to N. KITTI/K-Radar-style
datasets (mmdet3d ``Custom3DDataset``, our ``KRadarDataset``, mmdet ``CustomDataset``) read both the
inputs and the ground truth of ``evaluate`` from ``data_infos``, and COCO-style ones from ``img_ids``, so
cutting these keeps predictions and ground truth aligned. A dataset with other needs can define
``subset(n)`` returning its own subset; one without any per-sample list is refused with a clear error.
"""
import copy

# Per-sample attributes that are cut to the first N entries when they have len(dataset) entries.
PER_SAMPLE_ATTRIBUTES = ('data_infos', 'img_ids', 'flag', 'proposals')


def subset_dataset(dataset, num_samples):
    """The first ``num_samples`` samples of ``dataset`` (the dataset itself if it has no more)."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise ValueError('eval_samples must be a positive integer, got {!r}'.format(num_samples))
    size = len(dataset)
    if num_samples >= size:
        return dataset
    if callable(getattr(dataset, 'subset', None)):
        subset = dataset.subset(num_samples)
    else:
        subset = copy.copy(dataset)
        state = vars(dataset)
        for name in PER_SAMPLE_ATTRIBUTES:
            value = state.get(name, None)
            if value is not None and hasattr(value, '__len__') and len(value) == size:
                setattr(subset, name, value[:num_samples])
    if len(subset) != num_samples:
        raise ValueError(
            'eval_samples={}: cannot take the first samples of {} (len {}): it keeps none of the per-sample '
            'lists {} that define its length and ground truth; give it a subset(n) method'.format(
                num_samples, type(dataset).__name__, size, ', '.join(PER_SAMPLE_ATTRIBUTES)))
    return subset


def rebuild_loader(loader, dataset):
    """A DataLoader like ``loader`` (batch size, workers, collate, sampler type) over ``dataset``."""
    from torch.utils.data import DataLoader, DistributedSampler
    if loader.batch_size is None:
        raise ValueError('eval_samples: the validation DataLoader uses a custom batch_sampler ({}); '
                         'cannot rebuild it over a subset'.format(type(loader.batch_sampler).__name__))
    sampler = loader.sampler
    new_sampler = None
    if isinstance(sampler, DistributedSampler):
        kwargs = dict(num_replicas=sampler.num_replicas, rank=sampler.rank, shuffle=sampler.shuffle)
        if hasattr(sampler, 'seed'):
            kwargs['seed'] = sampler.seed
        new_sampler = type(sampler)(dataset, **kwargs)
    kwargs = dict(batch_size=loader.batch_size, sampler=new_sampler, num_workers=loader.num_workers,
                  collate_fn=loader.collate_fn, pin_memory=loader.pin_memory, drop_last=loader.drop_last,
                  timeout=loader.timeout, worker_init_fn=loader.worker_init_fn)
    if loader.num_workers > 0:
        kwargs['persistent_workers'] = getattr(loader, 'persistent_workers', False)
    return DataLoader(dataset, **kwargs)


def subset_eval_hook(hook, num_samples, logger=None):
    """Point an mmcv EvalHook at the first ``num_samples`` samples of its validation set."""
    dataset = hook.dataloader.dataset
    subset = subset_dataset(dataset, num_samples)
    if subset is dataset:
        if logger is not None:
            logger.info('eval_samples=%d >= %d validation samples: evaluating all of them',
                        num_samples, len(dataset))
        return
    hook.dataloader = rebuild_loader(hook.dataloader, subset)
    if logger is not None:
        logger.info('eval_samples: evaluating the first %d of %d validation samples (%s)',
                    len(subset), len(dataset), type(dataset).__name__)


def subset_by_indices(dataset, keep):
    """The samples ``keep`` (sorted dataset indices) of ``dataset``: its per-sample lists cut to them."""
    keep = list(keep)
    if callable(getattr(dataset, 'subset_indices', None)):
        return dataset.subset_indices(keep)
    subset = copy.copy(dataset)
    size, state = len(dataset), vars(dataset)
    for name in PER_SAMPLE_ATTRIBUTES:
        value = state.get(name, None)
        if value is not None and hasattr(value, '__len__') and len(value) == size:
            setattr(subset, name, [value[i] for i in keep] if isinstance(value, list) else value[keep])
    if len(subset) != len(keep):
        raise ValueError('cannot leave samples out of {}: it keeps none of the per-sample lists {}'.format(
            type(dataset).__name__, ', '.join(PER_SAMPLE_ATTRIBUTES)))
    return subset
