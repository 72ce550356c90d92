"""The declared set of facts (kradar_plugin/doctor/fact_names.py): every key a rule reads and every key the
probes, the inputs and the derivations produce is declared, and every declared fact is produced or read."""
import ast
import glob
import os
import re
import sys

from kradar_plugin.doctor import checks, environment, fact_names, probes
from kradar_plugin.doctor.probes import loader_probe
from kradar_plugin.doctor.probes.checkpoint_meta import checkpoint_facts
from kradar_plugin.doctor.probes.config_facts import config_facts
from kradar_plugin.doctor.probes import framework

from .helpers import fact_sheets

DOCTOR = os.path.dirname(os.path.abspath(checks.__file__))
CHECKPOINTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')


def _is_facts(node):
    return isinstance(node, ast.Name) and node.id == 'facts'


def _is_assumed(node):
    """``assumed`` or ``facts.get('assumed', ...)``: the list of assumed fact keys."""
    return (isinstance(node, ast.Name) and node.id == 'assumed') or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get'
        and _is_facts(node.func.value) and node.args and _string(node.args[0]) == 'assumed')


def _string(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # Python >= 3.8
        return node.value
    if node.__class__.__name__ == 'Str':  # Python 3.7
        return node.s
    if isinstance(node, ast.Index):  # Python 3.7/3.8 subscripts
        return _string(node.value)
    return None


def keys_read_in_source(path):
    """String keys of ``facts.get('k')``, ``facts['k']``, ``'k' in facts`` and ``'k' in assumed`` in a file."""
    with open(path) as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' \
                and _is_facts(node.func.value) and node.args:
            key = _string(node.args[0])
        elif isinstance(node, ast.Subscript) and _is_facts(node.value):
            key = _string(node.slice)
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)) and (
                _is_facts(node.comparators[0]) or _is_assumed(node.comparators[0])):
            key = _string(node.left)
        if key is not None:
            found.add(key)
    return found


class RecordingFacts(dict):
    """A facts dict that records every key a rule looks up."""

    def __init__(self, *args):
        dict.__init__(self, *args)
        self.read = set()

    def get(self, key, default=None):
        self.read.add(key)
        return dict.get(self, key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key):
        self.read.add(key)
        return dict.__contains__(self, key)


def rule_files():
    return sorted(glob.glob(os.path.join(DOCTOR, 'rules', '*.py'))) + [os.path.join(DOCTOR, 'checks.py'),
                                                                     os.path.join(DOCTOR, 'environment.py')]


def keys_read():
    """Every key the checks' needs, the judges (and the derivations) read: in their source, in the rows, and
    while judging the fact sheets."""
    read = set()
    for path in rule_files():
        read |= keys_read_in_source(path)
    for facts in fact_sheets():
        recording = RecordingFacts(facts)
        checks.evaluate(recording)
        read |= recording.read
    for check in checks.CHECKS:
        read.update(check.shows or ())
        read.update(n for n in (need[0] if isinstance(need, tuple) else need for need in check.needs)
                    if n not in checks.DERIVED)
    return read


def _returned_dict_keys(function):
    source = ast.parse(open(loader_probe.__file__).read())
    keys = set()
    for node in ast.walk(source):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                    keys.update(_string(k) for k in ret.value.keys)
    return keys


def keys_produced(tmp_path):
    """Every key the probes, the inputs (--config, --train-script, --checkpoint, --assume), the loader probe
    and the derivations produce."""
    cfg = tmp_path / 'cfg.py'
    cfg.write_text("data = dict(samples_per_gpu=2, workers_per_gpu=2, train=dict(pipeline=[dict(type='A')]))\n"
                   "gpus = 2\ndist_params = dict(backend='nccl', timeout='x')\nevaluation = dict(interval=1)\n"
                   "find_unused_parameters = True\nsharing_strategy = 'file_system'\n")
    script = tmp_path / 'train.py'
    script.write_text("import torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\n")
    produced = set(probes.gather(quick=True))
    produced |= set(config_facts(str(cfg)))
    produced |= set(checkpoint_facts(os.path.join(CHECKPOINTS, 'mmdet3d_0.17.3_zip.pth')))
    produced |= set(checks.collect_facts(assume='numba=0.58.1,torch=2.0.1', config=str(cfg), train_script=str(script),
                                         checkpoint=os.path.join(CHECKPOINTS, 'mmengine_0.10.7_zip.pth'),
                                         compile_test=True, quick=True))
    produced |= set(re.findall(r"out\['([a-z-]+)'\]", framework._FRAMEWORK_SCRIPT))
    produced |= set(probes.loaded_framework_facts())
    produced |= set(probes.framework_probe({'numpy'}, python=sys.executable + '-missing'))  # probe-error
    produced |= set(probes.import_probe(set()))
    produced |= _returned_dict_keys('probe_rank') | _returned_dict_keys('run_loader_probe')
    produced |= set(environment.ASSUMABLE) | set(environment.IMPORT_FACTS)
    for group in environment.GROUPS:
        produced.update(group)
    for facts in fact_sheets():
        produced |= set(environment.derive(dict(facts)))
    return produced


def test_every_key_a_rule_reads_is_declared():
    read = keys_read()
    assert 'numpy-effective' in read and 'pitfalls' in read and 'script-facts' in read  # the scan sees them
    assert fact_names.undeclared(read) == []


def test_every_key_produced_is_declared(tmp_path):
    produced = keys_produced(tmp_path)
    assert {'python', 'shm', 'numpy-runtime', 'gpu-cc', 'loader-demands', 'checkpoint-mmdet3d',
            'samples-per-gpu', 'gpus-for-run', 'compile-test', 'assumed'} <= produced
    assert fact_names.undeclared(produced) == []


def test_every_declared_fact_is_produced_or_read(tmp_path):
    used = keys_produced(tmp_path) | keys_read()
    assert sorted(fact_names.NAMES - used) == []


def test_the_table_is_one_row_per_fact_with_a_meaning():
    names = [f.name for f in fact_names.FACTS]
    assert len(names) == len(set(names))
    assert all(f.meaning and f.source for f in fact_names.FACTS)
    assert fact_names.meaning('numpy-effective').startswith('the numpy that imports')


def test_the_scan_reads_string_keys_only(tmp_path):
    path = tmp_path / 'rule.py'
    path.write_text("def r(facts):\n    key = 'x'\n    a = facts.get('a') or facts['b'] or 'c' in facts\n"
                    "    return facts.get(key), 'd' in facts.get('assumed', ()), other.get('e')\n")
    assert keys_read_in_source(str(path)) == {'a', 'b', 'c', 'd', 'assumed'}
