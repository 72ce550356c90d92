"""A small mmengine model, dataset and metric for the fast tests of the runner adapters (mmengine's real
Runner, loops, hooks and DDP; no mmdet3d). The model predicts, per sample, a deterministic function of the
sample's value and of its weights; the metric reports the mean prediction and how many samples it saw, and
keeps ``sample_idx`` like mmdet3d's metrics. ``fail_on_rank`` plants an inference failure on one rank,
``ToyMetric(fail=True)`` a metric failure."""
import torch
from mmengine.dataset import BaseDataset
from mmengine.evaluator import BaseMetric
from mmengine.model import BaseModel
from mmengine.registry import DATA_SAMPLERS, DATASETS, METRICS, MODELS
from torch.utils.data import Sampler


@DATASETS.register_module()
class ToyDataset(BaseDataset):
    METAINFO = {'classes': ('thing',)}

    def __init__(self, size=10, **kwargs):
        self.size = size
        super(ToyDataset, self).__init__(ann_file='', serialize_data=False, **kwargs)

    def load_data_list(self):
        return [{'value': float(i)} for i in range(self.size)]

    def prepare_data(self, idx):
        info = self.get_data_info(idx)
        return {'inputs': torch.tensor([info['value']]), 'data_samples': info['sample_idx']}


@MODELS.register_module()
class ToyModel(BaseModel):

    def __init__(self, fail_on_rank=None):
        super(ToyModel, self).__init__()
        self.linear = torch.nn.Linear(1, 1)
        self.fail_on_rank = fail_on_rank

    def forward(self, inputs, data_samples=None, mode='tensor'):
        x = torch.stack(inputs) if isinstance(inputs, list) else inputs
        out = self.linear(x.float())
        if mode == 'loss':
            return {'loss': (out ** 2).mean()}
        if mode == 'predict':
            if self.fail_on_rank is not None:
                import torch.distributed as dist
                if dist.is_initialized() and dist.get_rank() == self.fail_on_rank:
                    raise RuntimeError('planted inference failure on rank {}'.format(self.fail_on_rank))
            return [{'sample_idx': int(s), 'pred': float(o)} for s, o in zip(data_samples, out)]
        return out


@METRICS.register_module()
class ToyMetric(BaseMetric):
    default_prefix = 'toy'

    def __init__(self, fail=False, **kwargs):
        super(ToyMetric, self).__init__(**kwargs)
        self.fail = fail

    def process(self, data_batch, data_samples):
        for sample in data_samples:
            self.results.append({'sample_idx': sample['sample_idx'], 'pred': sample['pred']})

    def compute_metrics(self, results):
        if self.fail:
            raise RuntimeError('planted metric failure')
        return {'mean': sum(r['pred'] for r in results) / len(results), 'n': len(results),
                'first': results[0]['sample_idx'], 'last': results[-1]['sample_idx']}


@DATA_SAMPLERS.register_module()
class WholeDatasetSampler(Sampler):
    """A rank-unaware validation sampler, the mistake the collection check exists for: every rank iterates
    the whole dataset (what a plain torch SequentialSampler does in a distributed job)."""

    def __init__(self, dataset, seed=None, **kwargs):
        self.dataset = dataset

    def __iter__(self):
        return iter(range(len(self.dataset)))

    def __len__(self):
        return len(self.dataset)
