"""mmengine's own checkpoint loads go through ``kradar_plugin.loading.load_checkpoint`` once the adapter is
imported: ``CheckpointLoader``'s local scheme is the plugin's, so a real Runner's checkpoint (HistoryBuffers and
numpy arrays in the message hub, optimizer, scheduler and EMA states) resumes with ``Runner(load_from=...,
resume=True)`` on every torch -- on torch >= 2.6 with upstream mmengine 0.10.7 and with onedl-mmengine, without
a ``weights_only=False`` fallback or any framework warning -- and a payload checkpoint is refused before anything
in it runs."""
import os
import warnings

import pytest

torch = pytest.importorskip('torch')
pytest.importorskip('mmengine')

import kradar_plugin.adapters.mmengine  # noqa: E402,F401 - installs the scheme
from kradar_plugin.adapters.mmengine.checkpoint_loading import load_from_local  # noqa: E402
from kradar_plugin.distributed.checkpoint_report import CheckpointReadError  # noqa: E402
from mmengine.runner.checkpoint import CheckpointLoader  # noqa: E402

from tests.loading.corpus_writer import mmengine_checkpoint, mmengine_toy_runner  # noqa: E402
from tests.loading.hostile_checkpoints import weights_with_payload  # noqa: E402


@pytest.fixture(scope='module')
def runner_checkpoint(tmp_path_factory):
    """A real Runner's epoch_1.pth (one epoch, SGD with momentum, MultiStepLR, EMAHook)."""
    return mmengine_checkpoint(str(tmp_path_factory.mktemp('mmengine')))


def _runner(work_dir, **kwargs):
    """A Runner of the corpus writer's toy model, its first epoch already done by the checkpoint."""
    return mmengine_toy_runner(work_dir, dict(classes=('Sedan', 'Bus or Truck')), max_epochs=2,
                               experiment_name='checkpoint_routes_{}'.format(abs(hash(str(work_dir)))), **kwargs)


def test_local_files_are_read_by_the_plugins_loader():
    assert CheckpointLoader._get_checkpoint_loader('work_dirs/x/epoch_1.pth') is load_from_local


def test_a_real_runner_checkpoint_resumes_with_no_fallback_and_no_warning(runner_checkpoint, tmp_path):
    runner = _runner(tmp_path / 'resume', load_from=runner_checkpoint, resume=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        runner.train()
    texts = [str(w.message) for w in caught]
    assert not [t for t in texts if 'weights_only' in t or 'full unpickling' in t], texts
    assert runner.epoch == 2
    lr = runner.message_hub.get_scalar('train/lr')
    assert type(lr).__name__ == 'HistoryBuffer' and len(lr.data[0]) == 4        # 2 + 2 iterations logged


def test_mmengines_load_checkpoint_gives_the_same_weights(runner_checkpoint):
    from mmengine.runner.checkpoint import _load_checkpoint
    ours = _load_checkpoint(runner_checkpoint, map_location='cpu')
    try:
        reference = torch.load(runner_checkpoint, map_location='cpu', weights_only=False)
    except TypeError:
        reference = torch.load(runner_checkpoint, map_location='cpu')
    for key in ('state_dict', 'ema_state_dict'):
        assert list(ours[key]) == list(reference[key])
        for name, value in reference[key].items():
            assert torch.equal(ours[key][name], value), (key, name)
    assert ours['param_schedulers'] == reference['param_schedulers']
    hub = ours['message_hub']['log_scalars']['train/loss']
    assert (hub._log_history == reference['message_hub']['log_scalars']['train/loss']._log_history).all()


def test_a_payload_checkpoint_as_load_from_is_refused(tmp_path):
    marker = tmp_path / 'payload_ran'
    path = weights_with_payload(str(tmp_path / 'epoch_12.pth'), str(marker))
    runner = _runner(tmp_path / 'work', load_from=path)
    with pytest.raises(CheckpointReadError) as err:
        runner.load_or_resume()
    text = str(err.value)
    assert 'cannot read checkpoint {} ('.format(path) in text and '\n' not in text
    assert 'refused to load the global os.system (met in archive/data.pkl' in text and '--trust-checkpoint' in text
    assert not os.path.exists(str(marker))
