"""Exact distributed evaluation: predict, from each rank's sampler indices, the order in which the
framework's result collection hands the predictions to the evaluation, and refuse any sampler for which
that order is not exactly ``0 .. len(dataset) - 1``; check what was collected before the metric runs.

The two collectors differ in one place:
- mmcv 1.x ``collect_results_cpu/gpu``: ``zip(*rank_parts)`` (skipping empty parts), so the tail of a
  longer part is lost;
- mmengine ``mmengine.dist.collect_results``: ``zip_longest`` over the parts (a shorter part loses nothing).
Both then truncate to ``len(dataset)``. Round-robin dealing padded at the end (torch/mmdet
``DistributedSampler``, mmengine ``DefaultSampler``, shuffle off) yields exactly ``0 .. len - 1``; a
sampler giving every rank the whole dataset, contiguous chunks, unequal shards or duplicates placed before
the truncation point silently pairs predictions with the wrong ground truth.
Pure Python: no torch, no framework, so it is tested on plain index lists.
"""
from itertools import chain, zip_longest

MMCV, MMENGINE = 'mmcv', 'mmengine'
# collector -> (what the results are called, the sampler to use)
_WORDS = {MMCV: ('predictions', 'mmdet/torch DistributedSampler'),
          MMENGINE: ('results', 'mmengine DefaultSampler')}
_PAD = object()


class CollectionError(RuntimeError):
    """The collected predictions would not line up one-to-one with the dataset."""


def _words(collector):
    if collector not in _WORDS:
        raise ValueError('collector must be one of {}, not {!r}'.format(sorted(_WORDS), collector))
    return _WORDS[collector]


def collected_order(rank_indices, size, collector=MMCV):
    """The dataset indices, in order, that the collector produces from the per-rank parts."""
    _words(collector)
    if collector == MMCV:
        parts = [list(p) for p in rank_indices if len(p)]
        order = list(chain.from_iterable(zip(*parts)))
    else:
        parts = [list(p) for p in rank_indices]
        order = [i for i in chain.from_iterable(zip_longest(*parts, fillvalue=_PAD)) if i is not _PAD]
    return order[:size]


def check_rank_indices(rank_indices, size, collector=MMCV):
    """Raise CollectionError (saying which defect) unless collection yields exactly ``range(size)``."""
    results, sampler = _words(collector)
    world = len(rank_indices)
    rank_indices = [list(p) for p in rank_indices]
    lengths = [len(p) for p in rank_indices]
    if world > 1 and size > 1 and all(sorted(set(p)) == list(range(size)) for p in rank_indices):
        raise CollectionError(
            'the validation sampler hands every rank the whole dataset ({} samples on each of {} ranks): '
            'each sample would be predicted {} times and after collection the first {} {} would be repeats '
            'of the first samples while the others are never evaluated. Use a distributed sampler that deals '
            'indices round-robin ({}, shuffle=False).'.format(size, world, world, size, results, sampler))
    for rank, part in enumerate(rank_indices):
        bad = [i for i in part if not 0 <= i < size]
        if bad:
            raise CollectionError('the validation sampler of rank {} yields index {} outside the dataset '
                                  '(len {})'.format(rank, bad[0], size))
    order = collected_order(rank_indices, size, collector)
    if len(order) < size:
        missing = sorted(set(range(size)) - set(order))
        why = (': rank parts have unequal lengths {} and zip() drops the tail of the longer ones (samples {} '
               'lost). Pad every rank to the same length.' if collector == MMCV else
               ' (per-rank lengths {}): samples {} are never evaluated.').format(lengths, _preview(missing))
        raise CollectionError('result collection would return {} {} for {} samples{}'.format(
            len(order), results, size, why))
    dups = _repeated(order)
    if dups:
        raise CollectionError(
            'padded duplicates survive the truncation to len(dataset)={}: samples {} would be evaluated '
            'twice and samples {} never (per-rank lengths {}). Padding must repeat samples only at the end '
            'of the round-robin order.'.format(size, _preview(dups), _preview(sorted(set(range(size)) - set(order))),
                                               lengths))
    if order != list(range(size)):
        first = next(k for k, i in enumerate(order) if i != k)
        raise CollectionError(
            'collected {} would be out of dataset order: position {} would hold sample {} (the sampler '
            'shuffles or does not deal indices round-robin rank::world_size, e.g. contiguous chunks); they '
            'would be scored against the wrong ground truth. Use {} with shuffle=False.'.format(
                results, first, order[first], sampler))


def check_result_count(num_results, size):
    """Raise CollectionError unless exactly ``size`` predictions came back (mmcv 1.x evaluation)."""
    if num_results != size:
        raise CollectionError(
            'collected {} predictions for a validation set of {} samples: the model must return exactly '
            'one result per input sample'.format(num_results, size))


def sample_index(result):
    """The ``sample_idx`` a metric stored with one result (dict key or attribute), or None."""
    value = result.get('sample_idx') if isinstance(result, dict) else getattr(result, 'sample_idx', None)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def check_results(results, size, metric_name='the metric'):
    """Raise CollectionError unless ``results`` holds exactly ``size`` entries with distinct ``sample_idx``
    (when the metric stores one): what an mmengine metric receives in ``compute_metrics``."""
    if len(results) != size:
        raise CollectionError(
            '{} received {} collected results for a validation set of {} samples: every sample must give '
            'exactly one result (results duplicated, dropped, or a model returning a different number of '
            'predictions than inputs)'.format(metric_name, len(results), size))
    known = [i for i in (sample_index(r) for r in results) if i is not None]
    if len(set(known)) != len(known):
        raise CollectionError(
            '{} received the results of samples {} more than once (sample_idx); {} distinct samples of {}: '
            'the distributed sampler is not rank-aware or pads inside the dataset'.format(
                metric_name, _preview(_repeated(known)), len(set(known)), size))


def _repeated(items):
    """The sorted values that ``items`` holds more than once."""
    seen, dups = set(), set()
    for i in items:
        (dups if i in seen else seen).add(i)
    return sorted(dups)


def _preview(items, limit=8):
    items = list(items)
    text = ', '.join(str(i) for i in items[:limit])
    return '[' + text + (', ... ({} in all)'.format(len(items)) if len(items) > limit else '') + ']'
