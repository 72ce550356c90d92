"""The mmengine result-collection order (zip_longest over rank parts, truncated) and the checks built on it."""
import pytest

from kradar_plugin.engine.collection import (CollectionError, check_rank_indices, check_results,
                                             collected_order)


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
