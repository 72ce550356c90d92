"""Exact distributed evaluation: predict, from each rank's sampler indices, the order in which mmcv's
``collect_results_cpu/gpu`` will hand the predictions to ``dataset.evaluate``, and refuse any sampler for
which that order is not exactly ``0 .. len(dataset) - 1``.

mmcv rebuilds the order by ``zip(*rank_parts)`` (skipping empty parts) and truncates to ``len(dataset)``.
That is only right for round-robin dealing padded at the end (torch/mmdet ``DistributedSampler``); a
sampler giving every rank the whole dataset, contiguous chunks, unequal shards or duplicates placed
before the truncation point silently pair predictions with the wrong ground truth.
Pure Python: no torch, no mmcv, so it is tested on plain index lists.
"""


class CollectionError(RuntimeError):
    """The collected predictions would not line up one-to-one with the dataset."""


def collected_order(rank_indices, size):
    """The dataset indices, in order, that mmcv's result collection produces from per-rank parts."""
    parts = [list(p) for p in rank_indices if len(p)]
    order = []
    for group in zip(*parts):
        order.extend(group)
    return order[:size]


def check_rank_indices(rank_indices, size):
    """Raise CollectionError (saying which defect) unless collection yields exactly range(size)."""
    world = len(rank_indices)
    rank_indices = [list(p) for p in rank_indices]
    lengths = [len(p) for p in rank_indices]
    if world > 1 and size > 1 and all(sorted(set(p)) == list(range(size)) for p in rank_indices):
        raise CollectionError(
            'the validation sampler hands every rank the whole dataset ({} samples on each of {} ranks): '
            'each sample would be predicted {} times and after collection the first {} predictions would '
            'be repeats of the first samples. Use a distributed sampler that deals indices round-robin '
            '(mmdet/torch DistributedSampler, shuffle=False).'.format(size, world, world, size))
    for rank, part in enumerate(rank_indices):
        bad = [i for i in part if not 0 <= i < size]
        if bad:
            raise CollectionError('the validation sampler of rank {} yields index {} outside the dataset '
                                  '(len {})'.format(rank, bad[0], size))
    order = collected_order(rank_indices, size)
    if len(order) < size:
        missing = sorted(set(range(size)) - set(order))
        raise CollectionError(
            'result collection would return {} predictions for {} samples: rank parts have unequal '
            'lengths {} and zip() drops the tail of the longer ones (samples {} lost). Pad every rank to '
            'the same length.'.format(len(order), size, lengths, _preview(missing)))
    seen = set()
    dups = []
    for i in order:
        if i in seen:
            dups.append(i)
        seen.add(i)
    if dups:
        raise CollectionError(
            'padded duplicates survive the truncation to len(dataset)={}: samples {} would be evaluated '
            'twice and samples {} never (per-rank lengths {}). Padding must repeat samples only at the end '
            'of the round-robin order.'.format(size, _preview(sorted(set(dups))),
                                               _preview(sorted(set(range(size)) - seen)), lengths))
    if order != list(range(size)):
        first = next(k for k, i in enumerate(order) if i != k)
        raise CollectionError(
            'collected predictions would be out of dataset order: position {} would hold sample {} '
            '(the sampler does not deal indices round-robin rank::world_size, e.g. contiguous chunks); '
            'predictions would be scored against the wrong ground truth.'.format(first, order[first]))


def check_result_count(num_results, size):
    """Raise CollectionError unless exactly ``size`` predictions came back."""
    if num_results != size:
        raise CollectionError(
            'collected {} predictions for a validation set of {} samples: the model must return exactly '
            'one result per input sample'.format(num_results, size))


def _preview(items, limit=8):
    items = list(items)
    text = ', '.join(str(i) for i in items[:limit])
    return '[' + text + (', ... ({} in all)'.format(len(items)) if len(items) > limit else '') + ']'
