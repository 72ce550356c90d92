"""The mmengine result-collection order (zip_longest over rank parts, truncated) and the checks built on it.

Expected orders are written out by hand from mmengine's rule."""
import functools

import pytest

from kradar_plugin.distributed import collection
from kradar_plugin.distributed.collection import CollectionError, check_results

collected_order = functools.partial(collection.collected_order, collector='mmengine')
check_rank_indices = functools.partial(collection.check_rank_indices, collector='mmengine')


def round_robin(size, world):
    """What mmengine's DefaultSampler(shuffle=False, round_up=True) deals to each rank."""
    total = -(-size // world) * world
    padded = (list(range(size)) * world)[:total]
    return [padded[rank:total:world] for rank in range(world)]


@pytest.mark.parametrize('size,world', [(1, 1), (7, 1), (7, 2), (8, 2), (10, 3), (2, 4)])
def test_round_robin_collects_in_dataset_order(size, world):
    parts = round_robin(size, world)
    assert collected_order(parts, size) == list(range(size))
    check_rank_indices(parts, size)


def test_unequal_parts_lose_nothing_with_zip_longest():
    # DefaultSampler(round_up=False): 5 samples on 2 ranks -> [0, 2, 4], [1, 3]; mmcv's zip() would drop 4
    parts = [[0, 2, 4], [1, 3]]
    assert collected_order(parts, 5) == [0, 1, 2, 3, 4]
    check_rank_indices(parts, 5)


def test_every_rank_the_whole_dataset_is_refused():
    with pytest.raises(CollectionError, match='hands every rank the whole dataset'):
        check_rank_indices([list(range(6)), list(range(6))], 6)


def test_shuffled_order_is_refused():
    with pytest.raises(CollectionError, match='out of dataset order: position 0 would hold sample 3'):
        check_rank_indices([[3, 0, 4], [1, 5, 2]], 6)


def test_chunked_sampler_is_refused():
    with pytest.raises(CollectionError, match='out of dataset order'):
        check_rank_indices([[0, 1, 2], [3, 4, 5]], 6)


def test_out_of_range_index_is_refused():
    with pytest.raises(CollectionError, match='rank 1 yields index 9'):
        check_rank_indices([[0, 2], [1, 9]], 4)


def test_duplicates_before_the_truncation_are_refused():
    with pytest.raises(CollectionError, match=r'samples \[1\] would be evaluated twice and samples \[3\] never'):
        check_rank_indices([[0, 2], [1, 1]], 4)


def test_results_count_and_duplicate_sample_idx():
    check_results([{'sample_idx': i} for i in range(4)], 4)
    with pytest.raises(CollectionError, match='received 3 collected results for a validation set of 4'):
        check_results([{'sample_idx': i} for i in range(3)], 4)
    with pytest.raises(CollectionError, match=r'samples \[0, 1\] more than once'):
        check_results([{'sample_idx': i} for i in (0, 1, 0, 1)], 4)
    check_results([{'no_index': 1}, {'no_index': 2}], 2)  # metrics that keep no sample_idx: count only


def test_the_two_collectors_differ_only_on_unequal_parts():
    parts = [[0, 2, 4], [1, 3]]
    assert collection.collected_order(parts, 5, 'mmcv') == [0, 1, 2, 3]
    with pytest.raises(CollectionError, match=r'zip\(\) drops the tail.*samples \[4\] lost'):
        collection.check_rank_indices(parts, 5, 'mmcv')
    with pytest.raises(CollectionError, match=r'mmengine DefaultSampler, shuffle=False'):
        check_rank_indices([list(range(4)), list(range(4))], 4)
    with pytest.raises(ValueError, match="collector must be one of"):
        collection.collected_order(parts, 5, 'detectron2')
