"""Test-only: a dataset module that touches CUDA when it is imported, through a tensor moved to the GPU in a
default argument (the pattern that makes every spawned DataLoader worker create a CUDA context).

On a machine without a GPU the call goes through torch's CUDA initialisation and fails; the module then
keeps the CPU tensor (real code would crash here), so that the import-time attempt is what the checks see.
"""
import torch
from mmdet.datasets import DATASETS

from .fixture_pitfalls import ToyPipelineDataset


def _on_gpu(values):
    tensor = torch.tensor(values)
    try:
        return tensor.cuda()
    except (AssertionError, RuntimeError):  # no CUDA on this machine: the attempt is what matters
        return tensor


@DATASETS.register_module()
class ToyCudaDefaultDataset(ToyPipelineDataset):
    """ToyPipelineDataset with a default argument built on the GPU at import time."""

    def __init__(self, num_samples=9, pipeline=None, test_mode=False, fail_in=None, ann_file=None,
                 offset=_on_gpu([0.0])):
        super(ToyCudaDefaultDataset, self).__init__(num_samples, pipeline, test_mode, fail_in, ann_file)
        self.offset = float(offset.cpu()[0])
