"""Check ``sampler``: every rank must draw its own share of the dataset.

A sampler that is not rank-aware (not a ``DistributedSampler``, or one that ignores ``rank``/
``num_replicas``) makes every rank see the whole dataset: the per-rank index draws of one epoch may share at
most the ``world - 1`` padding indices of ``DistributedSampler``. The validation loader must moreover give
mmcv's result collection exactly samples 0..len-1 in order.
"""
import itertools

from ...facts.result import CheckResult


def sampler_of(loader):
    """The object that decides this loader's indices (its batch sampler when that is a custom one)."""
    batch_sampler = getattr(loader, 'batch_sampler', None)
    sampler = getattr(loader, 'sampler', None)
    if batch_sampler is not None and type(batch_sampler).__name__ != 'BatchSampler':
        return batch_sampler
    return sampler


def describe_sampler(sampler):
    """'DistributedSampler (num_replicas=2)', 'MySampler (not a DistributedSampler)', 'no sampler'."""
    if sampler is None:
        return 'no sampler (sequential)'
    if hasattr(sampler, 'num_replicas'):
        return '%s (num_replicas=%s)' % (type(sampler).__name__, sampler.num_replicas)
    try:
        from torch.utils.data import DistributedSampler
        distributed = isinstance(sampler, DistributedSampler)
    except ImportError:
        distributed = False
    return type(sampler).__name__ + ('' if distributed else ' (not a DistributedSampler)')


def endless_limit(size):
    """More draws than one epoch of any finite (padded) sampler of ``size`` samples can give a rank."""
    return 2 * size + 64


def sampler_draws(loader, limit=None):
    """The dataset indices this rank's loader visits in one epoch (flattened batches), at most ``limit``
    (default: 2 x len(dataset) + 64, which cuts an infinite sampler and shows that it is one). Global RNG
    states are restored afterwards, so drawing them changes nothing in the run."""
    import random

    import numpy as np
    import torch
    size = len(loader.dataset)
    limit = endless_limit(size) if limit is None else limit
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    try:
        batch_sampler = getattr(loader, 'batch_sampler', None)
        if batch_sampler is not None:
            flat = (int(i) for batch in batch_sampler for i in batch)
        elif getattr(loader, 'sampler', None) is not None:
            flat = (int(i) for i in loader.sampler)
        else:
            flat = iter(range(size))
        return list(itertools.islice(flat, limit))
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


def loader_batch_size(loader):
    size = getattr(loader, 'batch_size', None)
    if size is None:
        size = getattr(getattr(loader, 'batch_sampler', None), 'batch_size', 1)
    return size or 1


def judge_val_sampler(name, rank_indices, dataset_size, sampler_text):
    """Validation: mmcv's collection (zip of the rank parts, cut to len(dataset)) must give exactly samples
    0..len-1 in order (``kradar_plugin.distributed.collection``)."""
    from ...distributed.collection import CollectionError, check_rank_indices
    try:
        check_rank_indices(rank_indices, dataset_size)
    except CollectionError as exc:
        return CheckResult('sampler', 'FAIL', '%s: %s: %s' % (name, sampler_text, exc),
                           "build the validation loader with mmdet's DistributedSampler (dist=True, shuffle=False); "
                           "in a config, drop data.val_dataloader=dict(dist=False)")
    return CheckResult('sampler', 'OK', '%s: %s: mmcv\'s result collection gives samples 0..%d in order over %d '
                       'rank(s)' % (name, sampler_text, dataset_size - 1, len(rank_indices)), '')


def judge_sampler(name, rank_draws, dataset_size, sampler_text, batch_size=1):
    """``rank_draws``: per rank, the ``sampler_draws`` of one epoch. A rank-aware sampler gives each rank its
    own share (about len / world, plus padding); FAIL when the ranks draw the same sequence, or when every rank
    draws every sample in one epoch on a dataset too large for padding to explain that. An infinite sampler
    (``sampler_draws`` hit its limit) is judged on the first 1/world of the stream, which the ranks must split
    (at most world - 1 shared draws)."""
    world = len(rank_draws)
    if world <= 1:
        return CheckResult('sampler', 'OK', '%s: %s; single process (nothing to split)' % (name, sampler_text), '')
    if any(len(d) == 0 for d in rank_draws):
        return CheckResult('sampler', 'WARN', '%s: %s gives rank(s) %s no sample at all (%d samples, %d ranks)'
                           % (name, sampler_text, [r for r, d in enumerate(rank_draws) if not d], dataset_size,
                              world), 'give every rank samples: a dataset of at least %d samples' % world)
    fix = ("use mmdet's DistributedSampler/DistributedGroupSampler (or subclass torch's DistributedSampler and "
           "yield indices[rank::num_replicas]); in a config, drop data.%s_dataloader=dict(dist=False)"
           % ('val' if 'val' in name else 'train'))
    infinite = any(len(d) >= endless_limit(dataset_size) for d in rank_draws)
    if infinite:
        share = max(1, -(-dataset_size // world))
        heads = [d[:share] for d in rank_draws]
        shared = sum(len(d) for d in heads) - len(set().union(*heads))
        if heads[0] and all(h == heads[0] for h in heads[1:]) or shared > world - 1:
            return CheckResult('sampler', 'FAIL', '%s: %s is not rank-aware: over the first %d draws of its '
                               'endless stream the ranks share %d of %d indices (every rank sees the whole '
                               'dataset)' % (name, sampler_text, share, shared, share * world), fix)
        return CheckResult('sampler', 'OK', '%s: %s (endless) splits its stream over %d ranks (first %d draws '
                           'per rank: %d shared)' % (name, sampler_text, world, share, shared), '')
    if all(d == rank_draws[0] for d in rank_draws[1:]):
        return CheckResult('sampler', 'FAIL', '%s: %s is not rank-aware: every rank draws the same %d indices '
                           'per epoch, so every rank sees the whole dataset (each sample %dx per epoch)'
                           % (name, sampler_text, len(rank_draws[0]), world), fix)
    everything = set(range(dataset_size))
    cover_all = all(everything <= set(d) for d in rank_draws)
    tiny = dataset_size <= 4 * world * max(1, batch_size)  # padding alone may give each rank every sample
    if cover_all and not tiny:
        return CheckResult('sampler', 'FAIL', '%s: %s is not rank-aware: each of the %d ranks draws all %d '
                           'samples per epoch (%s draws), so every sample is seen %dx per epoch'
                           % (name, sampler_text, world, dataset_size, '/'.join(str(len(d)) for d in rank_draws),
                              world), fix)
    return CheckResult('sampler', 'OK', '%s: %s splits %d samples over %d ranks (%s draws per rank)%s'
                       % (name, sampler_text, dataset_size, world, '/'.join(str(len(d)) for d in rank_draws),
                          ' (too few samples to tell a split from padding)' if cover_all else ''), '')
