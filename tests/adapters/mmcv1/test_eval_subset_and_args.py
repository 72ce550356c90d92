"""eval_samples subsetting (datasets and loaders) and the 1.x train entry's argument handling."""
import mmcv
import pytest
import torch
from mmdet.datasets.samplers import DistributedSampler
from torch.utils.data import DataLoader, TensorDataset

from kradar_plugin.adapters.mmcv1.subset import rebuild_loader, subset_dataset

from .fixture_components import ToyEvalDataset


def test_subset_cuts_per_sample_lists_and_leaves_the_original():
    full = ToyEvalDataset(num_samples=9)
    sub = subset_dataset(full, 4)
    assert len(sub) == 4 and len(full) == 9
    assert [i['sample_idx'] for i in sub.data_infos] == [0, 1, 2, 3]
    assert len(sub.flag) == 4
    results = [dict(sample_idx=i, pred=0.0) for i in range(4)]
    assert sub.evaluate(results)['toy/num_samples'] == 4
    assert subset_dataset(full, 9) is full and subset_dataset(full, 50) is full


def test_subset_prefers_the_dataset_own_method():
    class Own(ToyEvalDataset):
        def subset(self, n):
            other = Own(num_samples=n)
            other.marker = 'own'
            return other
    assert subset_dataset(Own(num_samples=6), 2).marker == 'own'


def test_subset_refuses_a_dataset_without_per_sample_lists():
    with pytest.raises(ValueError, match='cannot take the first samples of TensorDataset'):
        subset_dataset(TensorDataset(torch.zeros(5, 1)), 2)
    with pytest.raises(ValueError, match='positive integer'):
        subset_dataset(ToyEvalDataset(), 0)


def test_rebuilt_distributed_loader_deals_the_subset_round_robin():
    full = ToyEvalDataset(num_samples=9)
    loader = DataLoader(full, batch_size=2, sampler=DistributedSampler(full, 2, 1, shuffle=False),
                        collate_fn=lambda batch: batch)
    sub_loader = rebuild_loader(loader, subset_dataset(full, 5))
    assert isinstance(sub_loader.sampler, DistributedSampler)
    # 5 samples on 2 ranks: padded to 6 with sample 0; rank 1 gets 1, 3 and the padding 0
    assert list(sub_loader.sampler) == [1, 3, 0]
    assert sub_loader.batch_size == 2


def load_train_script():
    """The 1.x train entry (tools/train.py is its shim)."""
    from kradar_plugin.adapters.mmcv1 import train
    return train


def test_train_script_arguments(monkeypatch):
    monkeypatch.setenv('LOCAL_RANK', '0')   # parse_args sets it from --local-rank when unset: not for later tests
    train = load_train_script()
    assert train.parse_args(['c.py', '--local-rank=1']).local_rank == 1
    assert train.parse_args(['c.py', '--local_rank', '2']).local_rank == 2
    args = train.parse_args(['c.py', '--eval-first', '--eval-samples', '7'])
    assert args.eval_first and args.eval_samples == 7
    for bad in (['c.py', '--eval-only', '--eval-first'], ['c.py', '--eval-only', '--no-validate'],
                ['c.py', '--eval-samples', '0']):
        with pytest.raises(SystemExit):
            train.parse_args(bad)


def test_train_script_keeps_a_custom_base_constructor():
    train = load_train_script()
    cfg = mmcv.Config(dict(runner=dict(type='EpochBasedRunner', max_epochs=2, constructor='MyConstructor')))
    train.apply_eval_switch(cfg, train.parse_args(['c.py', '--eval-only']))
    assert cfg.runner.constructor == 'EvalOnlyRunnerConstructor'
    assert cfg.runner.base_constructor == 'MyConstructor'
    assert cfg.runner.eval_mode == 'only'
    cfg = mmcv.Config(dict(runner=dict(type='EpochBasedRunner', max_epochs=2)))
    train.apply_eval_switch(cfg, train.parse_args(['c.py']))
    assert cfg.runner.eval_mode == 'off' and 'eval_samples' not in cfg.runner
