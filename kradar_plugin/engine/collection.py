"""Exact distributed evaluation under mmengine: the order in which ``mmengine.dist.collect_results`` hands
the per-sample results to ``compute_metrics``, checked from every rank's sampler indices before the first
evaluation, and the collected results checked (count, duplicate ``sample_idx``) before the metric runs.

mmengine differs from mmcv 1.x: it rebuilds the order with ``zip_longest`` over the rank parts (a shorter
part loses nothing) and then truncates to ``len(dataset)``. Round-robin dealing (mmengine's
``DefaultSampler``, torch's ``DistributedSampler``, shuffle off) yields exactly ``0 .. len - 1``; a sampler
that hands every rank the whole dataset silently duplicates the first samples and drops the others, and a
shuffled or chunked one permutes the results. Pure Python: no torch, no mmengine.
"""
from itertools import chain, zip_longest

from ._mmcv_free import collection_check

CollectionError = collection_check.CollectionError
_preview = collection_check._preview

_PAD = object()


def collected_order(rank_indices, size):
    """The dataset indices, in order, that ``mmengine.dist.collect_results`` produces from the rank parts."""
    parts = [list(p) for p in rank_indices]
    order = [i for i in chain.from_iterable(zip_longest(*parts, fillvalue=_PAD)) if i is not _PAD]
    return order[:size]


def check_rank_indices(rank_indices, size):
    """Raise CollectionError (saying which defect) unless collection yields exactly ``range(size)``."""
    world = len(rank_indices)
    rank_indices = [list(p) for p in rank_indices]
    lengths = [len(p) for p in rank_indices]
    if world > 1 and size > 1 and all(sorted(set(p)) == list(range(size)) for p in rank_indices):
        raise CollectionError(
            'the validation sampler hands every rank the whole dataset ({} samples on each of {} ranks): each '
            'sample would be predicted {} times and after collection the first {} results would hold '
            'duplicates while the other samples are never evaluated. Use a distributed sampler that deals '
            'indices round-robin (mmengine DefaultSampler, shuffle=False).'.format(size, world, world, size))
    for rank, part in enumerate(rank_indices):
        bad = [i for i in part if not 0 <= i < size]
        if bad:
            raise CollectionError('the validation sampler of rank {} yields index {} outside the dataset '
                                  '(len {})'.format(rank, bad[0], size))
    order = collected_order(rank_indices, size)
    if len(order) < size:
        missing = sorted(set(range(size)) - set(order))
        raise CollectionError(
            'result collection would return {} results for {} samples (per-rank lengths {}): samples {} are '
            'never evaluated'.format(len(order), size, lengths, _preview(missing)))
    seen, dups = set(), []
    for i in order:
        if i in seen:
            dups.append(i)
        seen.add(i)
    if dups:
        raise CollectionError(
            'duplicates survive the truncation to len(dataset)={}: samples {} would be evaluated twice and '
            'samples {} never (per-rank lengths {}). Padding must repeat samples only at the end of the '
            'round-robin order.'.format(size, _preview(sorted(set(dups))),
                                        _preview(sorted(set(range(size)) - seen)), lengths))
    if order != list(range(size)):
        first = next(k for k, i in enumerate(order) if i != k)
        raise CollectionError(
            'collected results would be out of dataset order: position {} would hold sample {} (the sampler '
            'shuffles or does not deal indices round-robin rank::world_size); metrics that pair results with '
            'ground truth by position would score the wrong samples. Use shuffle=False.'.format(
                first, order[first]))


def sample_index(result):
    """The ``sample_idx`` a metric stored with one result (dict key or attribute), or None."""
    if isinstance(result, dict):
        value = result.get('sample_idx')
    else:
        value = getattr(result, 'sample_idx', None)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def check_results(results, size, metric_name='the metric'):
    """Raise CollectionError unless ``results`` holds exactly ``size`` entries with distinct ``sample_idx``
    (when the metric stores one)."""
    if len(results) != size:
        raise CollectionError(
            '{} received {} collected results for a validation set of {} samples: every sample must give '
            'exactly one result (results duplicated, dropped, or a model returning a different number of '
            'predictions than inputs)'.format(metric_name, len(results), size))
    indices = [sample_index(r) for r in results]
    known = [i for i in indices if i is not None]
    if len(set(known)) != len(known):
        seen, dups = set(), []
        for i in known:
            if i in seen:
                dups.append(i)
            seen.add(i)
        raise CollectionError(
            '{} received the results of samples {} more than once (sample_idx); {} distinct samples of {}: '
            'the distributed sampler is not rank-aware or pads inside the dataset'.format(
                metric_name, _preview(sorted(set(dups))), len(set(known)), size))
