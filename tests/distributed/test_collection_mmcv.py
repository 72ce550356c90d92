"""Exact distributed evaluation: the collected order predicted from per-rank sampler indices.

Expected orders are written out by hand from mmcv's rule (zip of the rank parts, truncated to len)."""
import pytest

from kradar_plugin.distributed.collection import (CollectionError, check_rank_indices,
                                                   check_result_count, collected_order)


def round_robin(size, world):
    """torch DistributedSampler(shuffle=False): pad with leading indices, deal rank::world."""
    per_rank = -(-size // world)
    indices = list(range(size))
    indices += indices[:per_rank * world - size]
    return [indices[r::world] for r in range(world)]


def test_round_robin_with_padding_is_exact():
    parts = round_robin(9, 2)
    assert parts == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 0]]
    assert collected_order(parts, 9) == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    check_rank_indices(parts, 9)
    for size in range(1, 12):
        for world in range(1, 5):
            check_rank_indices(round_robin(size, world), size)


def test_whole_dataset_on_every_rank_is_named():
    parts = [list(range(6)), list(range(6))]
    # what mmcv would hand to evaluate: each of the first 3 samples twice
    assert collected_order(parts, 6) == [0, 0, 1, 1, 2, 2]
    with pytest.raises(CollectionError, match='hands every rank the whole dataset'):
        check_rank_indices(parts, 6)


def test_contiguous_chunks_are_out_of_order():
    parts = [[0, 1, 2], [3, 4, 5]]
    assert collected_order(parts, 6) == [0, 3, 1, 4, 2, 5]
    with pytest.raises(CollectionError, match='out of dataset order: position 1 would hold sample 3'):
        check_rank_indices(parts, 6)


def test_unequal_shards_lose_samples():
    parts = [[0, 2, 4], [1, 3]]  # no padding: zip stops at the shorter part
    assert collected_order(parts, 5) == [0, 1, 2, 3]
    with pytest.raises(CollectionError, match=r'4 predictions for 5 samples.*samples \[4\] lost'):
        check_rank_indices(parts, 5)


def test_padding_before_the_truncation_point_is_a_duplicate():
    # a sampler that pads at the front: rank 0 gets the padded repeat of sample 0 first
    parts = [[0, 1, 3], [0, 2, 4]]
    assert collected_order(parts, 5) == [0, 0, 1, 2, 3]
    with pytest.raises(CollectionError, match=r'padded duplicates.*samples \[0\] would be evaluated twice'
                                              r' and samples \[4\] never'):
        check_rank_indices(parts, 5)


def test_index_outside_dataset():
    with pytest.raises(CollectionError, match='rank 1 yields index 7'):
        check_rank_indices([[0, 2], [1, 7]], 4)


def test_result_count():
    check_result_count(9, 9)
    with pytest.raises(CollectionError, match='collected 8 predictions for a validation set of 9'):
        check_result_count(8, 9)
