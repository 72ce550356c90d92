"""A payload checkpoint as an eval-only run's ``load_from`` on the mmengine stack (the mirror of
tests/adapters/mmcv1/test_checkpoint_launch.py): our train entry with the toy config, one process; the run stops
with the plugin loader's one error (the global, the file, the opt-in) and the payload never runs."""
import os

import pytest

from tests.loading.hostile_checkpoints import weights_with_payload

from .helpers import TOY_CONFIG, launch

pytestmark = [pytest.mark.launch, pytest.mark.mm2]


def test_payload_checkpoint_as_load_from_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / 'payload_ran'
    bad = weights_with_payload(str(tmp_path / 'epoch_12.pth'), str(marker))
    job = launch(TOY_CONFIG, tmp_path / 'eval', module='kradar_plugin.adapters.mmengine.train',
                 args=['--eval-only', '--cfg-options', 'load_from=' + bad])
    assert job.returncode != 0, job.describe()
    assert 'CheckpointReadError: [rank 0/1] cannot read checkpoint {}'.format(bad) in job.output, job.describe()
    assert 'refused to load the global os.system (met in archive/data.pkl' in job.output
    assert '--trust-checkpoint' in job.output and 'eval-only: done' not in job.output
    assert not os.path.exists(str(marker))
