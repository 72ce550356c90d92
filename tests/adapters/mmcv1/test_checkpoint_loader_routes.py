"""mmcv 1.x's own checkpoint loads go through ``kradar_plugin.loading.load_checkpoint`` once the adapter is
imported: ``CheckpointLoader``'s local scheme is the plugin's, so ``mmcv.runner.load_checkpoint``, a runner's
``load_checkpoint`` and ``resume`` read a real runner's checkpoint (numpy arrays in ``meta``, optimizer state)
through it, on torch 1.10 and 2.x alike, and a payload checkpoint is refused before anything in it runs."""
import os

import pytest

torch = pytest.importorskip('torch')
mmcv = pytest.importorskip('mmcv')
if not mmcv.__version__.startswith('1.'):
    pytest.skip('mmcv 1.x only', allow_module_level=True)

import kradar_plugin.adapters.mmcv1  # noqa: E402,F401 - installs the scheme
from kradar_plugin.adapters.mmcv1.checkpoint_loading import load_from_local  # noqa: E402
from kradar_plugin.distributed.checkpoint_report import CheckpointReadError  # noqa: E402
from mmcv.runner.checkpoint import CheckpointLoader, load_checkpoint  # noqa: E402

from tests.loading.corpus_writer import mmcv1_checkpoint  # noqa: E402
from tests.loading.hostile_checkpoints import weights_with_payload  # noqa: E402


@pytest.fixture(scope='module')
def runner_checkpoint(tmp_path_factory):
    """mmcv's EpochBasedRunner.save_checkpoint after one SGD step, as torch.load reads it back."""
    path = mmcv1_checkpoint(str(tmp_path_factory.mktemp('mmcv1')))
    try:
        reference = torch.load(path, map_location='cpu', weights_only=False)
    except TypeError:
        reference = torch.load(path, map_location='cpu')
    return path, reference


class Toy(torch.nn.Module):
    def __init__(self):
        super(Toy, self).__init__()
        self.linear = torch.nn.Linear(4, 2)
        self.bn = torch.nn.BatchNorm1d(2)

    def train_step(self, data, optimizer):          # the runner asks for one; nothing trains here
        raise NotImplementedError


def test_local_files_are_read_by_the_plugins_loader():
    assert CheckpointLoader._get_checkpoint_loader('work_dirs/x/epoch_1.pth') is load_from_local
    assert CheckpointLoader._get_checkpoint_loader('/abs/epoch_1.pth') is load_from_local


def test_mmcv_load_checkpoint_of_a_real_runner_checkpoint(runner_checkpoint):
    path, reference = runner_checkpoint
    model = Toy()
    checkpoint = load_checkpoint(model, path, map_location='cpu', strict=True)
    for key, value in reference['state_dict'].items():
        assert torch.equal(model.state_dict()[key], value), key
    assert (checkpoint['meta']['anchors'] == reference['meta']['anchors']).all()
    assert checkpoint['meta']['mmcv_version'] == mmcv.__version__
    momentum = checkpoint['optimizer']['state'][0]['momentum_buffer']
    assert torch.equal(momentum, reference['optimizer']['state'][0]['momentum_buffer'])


def test_runner_resume_restores_optimizer_and_epoch(runner_checkpoint, tmp_path):
    import logging
    from mmcv.runner import EpochBasedRunner
    path, reference = runner_checkpoint
    model = Toy()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    runner = EpochBasedRunner(model, optimizer=optimizer, work_dir=str(tmp_path), logger=logging.getLogger('t'),
                              max_epochs=2)
    runner.resume(path, map_location='cpu')
    assert runner.epoch == 1 and optimizer.param_groups[0]['lr'] == 0.1
    assert torch.equal(optimizer.state_dict()['state'][0]['momentum_buffer'],
                       reference['optimizer']['state'][0]['momentum_buffer'])


def test_a_payload_checkpoint_is_refused_by_mmcvs_own_load(tmp_path):
    marker = tmp_path / 'payload_ran'
    path = weights_with_payload(str(tmp_path / 'epoch_12.pth'), str(marker))
    with pytest.raises(CheckpointReadError) as err:
        load_checkpoint(Toy(), path, map_location='cpu')
    text = str(err.value)
    assert 'cannot read checkpoint {} ('.format(path) in text and '\n' not in text
    assert 'refused to load the global os.system (met in archive/data.pkl' in text and '--trust-checkpoint' in text
    assert not os.path.exists(str(marker))
