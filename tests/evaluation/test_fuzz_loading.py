"""A short, deterministic property-based fuzz of the loader and the input validation (see ``_fuzz``).

Mutated valid pickles, hostile values in valid structures and edited JSON conditions, each read and
converted as ``kradar-eval`` does (in process, small limits): content or one line naming the file, no other
exception, no hang, no crash. ``benchmarks/fuzz_loading.py`` runs the same strategies longer (and through
the child process).
"""
import os
import pickle
import tempfile

import pytest

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import HealthCheck, given, settings  # noqa: E402

from . import _fuzz  # noqa: E402

_SETTINGS = dict(derandomize=True, deadline=None, database=None, print_blob=False,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.filter_too_much])
_DIR = tempfile.mkdtemp(prefix='kradar_fuzz_')


@settings(max_examples=250, **_SETTINGS)
@given(_fuzz.mutated_pickles())
def test_mutated_pickles(case):
    kind, data = case
    _fuzz.check(_fuzz.write(_DIR, data), kind)


@settings(max_examples=200, **_SETTINGS)
@given(_fuzz.structure_files())
def test_hostile_values_in_valid_structures(case):
    kind, data, suffix = case
    _fuzz.check(_fuzz.write(_DIR, data, suffix), kind)


@settings(max_examples=100, **_SETTINGS)
@given(_fuzz.json_texts())
def test_edited_json_conditions(case):
    kind, data, suffix = case
    _fuzz.check(_fuzz.write(_DIR, data, suffix), kind)


@pytest.mark.parametrize('kind', _fuzz.KINDS)
def test_the_unmutated_inputs_are_read(kind):
    """The base of every mutation is a valid input (so the mutations start from what kradar-eval reads)."""
    assert _fuzz.check(_fuzz.write(_DIR, pickle.dumps(_fuzz.valid(kind), protocol=4)), kind) == 'ok'


def test_the_mutations_change_the_stream_where_they_say():
    data = pickle.dumps(_fuzz.valid('results'), protocol=2)
    ops = _fuzz.ops_of(data)
    assert ops and ops[-1][0] == 'STOP' and ops[-1][2] == len(data)
    assert _fuzz.mutate(data, ('truncate', 0.5, 0.0, b'x')) == data[:ops[len(ops) // 2][1]]
    deleted = _fuzz.mutate(data, ('delete', 0.0, 0.0, b'x'))
    assert deleted == data[ops[0][2]:]
    memo = _fuzz.mutate(data, ('memo', 0.0, 0.5, b'y'))
    assert memo != data and len(memo) == len(data)
    assert os.path.isdir(_DIR)
