"""The launcher route of ``python -m torch.distributed.launch`` (mmdet3d's dist_train.sh before torchrun): from torch
2.0 on it passes ``--local-rank=N`` (``--local_rank`` before), which mmdet3d 1.4's own tools/train.py declares under
both spellings; the toy model, eval-only, 2 gloo processes on CPU, the same samples as the torchrun launch.
Run on every 2.0 stack (torch 2.0.1 and today's: the launcher's code moved between them)."""
import sys

import pytest

from tests import launching

from .helpers import TOY_CONFIG, Job, mmdet3d_train_script

pytestmark = [pytest.mark.launch, pytest.mark.mm2]

RUNNER = ['--cfg-options', 'runner_type=EvalOnlyRunner']


def test_torch_distributed_launch_passes_local_rank_to_mmdet3d_train_script(tmp_path):
    work = tmp_path / 'launch'
    cmd = [sys.executable, '-m', 'torch.distributed.launch', '--nproc_per_node=2',
           '--master_port={}'.format(launching.free_port()), mmdet3d_train_script(), TOY_CONFIG,
           '--launcher', 'pytorch', '--work-dir', str(work)] + RUNNER
    job = launching.run(cmd, work, cwd=str(tmp_path), env={'OMP_NUM_THREADS': '1'}, job_class=Job)
    assert job.returncode == 0, job.describe()
    assert 'kradar_plugin eval-only: done; stopping before the first training iteration' in job.output
    toy = [job.metrics(r, 'toy/') for r in job.val_records('toy/')]
    # every one of the 11 validation samples once, in order (rank 1's padding dropped), as torchrun's launch
    # (test_toy_launch)
    assert len(toy) == 1 and (toy[0]['toy/n'], toy[0]['toy/first'], toy[0]['toy/last']) == (11, 0, 10), toy
