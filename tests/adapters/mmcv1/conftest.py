"""Session fixtures of the mmcv 1.x runner tests."""
import pytest


@pytest.fixture(scope='session')
def trained(tmp_path_factory):
    """The directory with epoch_1..3.pth of one real toy training run (see sweep_checkpoints)."""
    from .sweep_checkpoints import train_checkpoints
    return train_checkpoints(tmp_path_factory.mktemp('sweep_train'))
