"""Hostile checkpoints (``hostile_checkpoints.py``): each is loaded in a forked child limited to 256 MiB more
address space and 60 s, and must end in one error line naming the file and what is wrong; no payload runs
(its marker file never appears). With the opt-in the same payload does run, after one warning."""
import os
import warnings

import pytest

from .hostile_checkpoints import hostile_files, load_in_child, write_zip, dict_pickle, payload

CASES = [
    'system-in-meta', 'eval-in-meta', 'exec-in-legacy', 'plain-pickle-named-pth', 'storage-8GiB-on-16-bytes',
    'legacy-storage-8GiB', 'tensor-outside-its-storage', 'empty', 'truncated-zip', 'truncated-legacy',
    'deeply-nested', 'billion-references', 'extra-member', 'duplicate-member']


@pytest.fixture(scope='module')
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp('hostile')
    marker = str(folder / 'payload_ran')
    return hostile_files(str(folder), marker), marker


def test_the_cases_are_the_issues(hostile):
    assert sorted(hostile[0]) == sorted(CASES)


@pytest.mark.parametrize('case', CASES)
def test_hostile_checkpoint_ends_in_one_error_line(hostile, case):
    files, marker = hostile
    path, expected = files[case]
    code, lines = load_in_child(path)
    assert code == 3 and len(lines) == 1, (code, lines)
    line = lines[0]
    assert line.startswith('CheckpointError: checkpoint {!r}: '.format(path)), line
    assert expected in line, line
    assert 'Traceback' not in line and 'MemoryError' not in line
    assert not os.path.exists(marker)


def test_the_opt_in_loads_with_full_unpickling_after_one_warning(tmp_path):
    """KRADAR_TRUST_CHECKPOINT=1 (or trust=True): torch.load runs the file's code -- the user asked for it."""
    pytest.importorskip('torch')
    marker = str(tmp_path / 'ran')
    path = write_zip(str(tmp_path / 'trusted.pth'), dict_pickle([('meta', payload('system', marker))]))
    code, lines = load_in_child(path, environ={'KRADAR_TRUST_CHECKPOINT': '0'})
    assert code == 3 and 'refused to load the global os.system' in lines[0] and not os.path.exists(marker)

    def trusted(p):
        from kradar_plugin.loading import load_checkpoint
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            load_checkpoint(p)
        assert len(caught) == 1 and 'full unpickling (KRADAR_TRUST_CHECKPOINT=1)' in str(caught[0].message)
        return caught
    code, lines = load_in_child(path, environ={'KRADAR_TRUST_CHECKPOINT': '1'}, loader=trusted)
    assert code == 0 and os.path.exists(marker), lines


def test_what_opts_in():
    """trust=True, KRADAR_TRUST_CHECKPOINT=1, the config key / --trust-checkpoint (set by the runner adapters
    through set_trusted); nothing else."""
    import argparse
    from kradar_plugin import runner_options
    from kradar_plugin.loading import safe_checkpoint as sc
    args = runner_options.add_arguments(argparse.ArgumentParser()).parse_args(['--trust-checkpoint'])
    assert runner_options.config_from_args(args) == {'trust_checkpoint': True}
    assert runner_options.resolve({}, ('trust_checkpoint',)) == {'trust_checkpoint': False}
    assert 'KRADAR_TRUST_CHECKPOINT=1' not in runner_options.requested_switches({'KRADAR_TRUST_CHECKPOINT': '1'})
    assert sc.trusted(environ={}) is None and sc.trusted(environ={'KRADAR_TRUST_CHECKPOINT': '0'}) is None
    assert sc.trusted(True, environ={}) == 'trust=True'
    assert sc.trusted(environ={'KRADAR_TRUST_CHECKPOINT': '1'}) == 'KRADAR_TRUST_CHECKPOINT=1'
    with pytest.raises(ValueError, match='KRADAR_TRUST_CHECKPOINT'):
        sc.trusted(environ={'KRADAR_TRUST_CHECKPOINT': 'maybe'})
    sc.set_trusted('runner.trust_checkpoint=True')
    try:
        assert sc.trusted(environ={}) == 'runner.trust_checkpoint=True'
    finally:
        sc.set_trusted(None)
    assert sc.trusted(environ={}) is None
