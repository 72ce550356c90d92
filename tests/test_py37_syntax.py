"""The package, tools, configs and benchmarks must stay Python-3.7 compatible (users run 3.7):
checked statically with vermin on every stack, and by running the suite on CPython 3.7 (.venv-echofusion)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERMIN = os.path.join(os.path.dirname(sys.executable), 'vermin')
TREES = ['kradar_plugin', 'tools', 'configs', 'benchmarks', 'setup.py']


def test_minimum_python_is_37():
    pytest.importorskip('vermin')
    paths = [os.path.join(ROOT, p) for p in TREES if os.path.exists(os.path.join(ROOT, p))]
    proc = subprocess.run([VERMIN, '--target=3.7-', '--violations', '--no-tips',
                           '--eval-annotations', '--backport', 'typing', '--exclude-regex', r'.*\.venv.*']
                          + paths, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode == 0, proc.stdout


def test_checker_catches_a_violation(tmp_path):
    """A 3.8 API in code that parses on every Python (vermin reads files with the running interpreter's
    parser: on 3.7 a 3.8 *syntax* is unparsable to it and judged 'not enough evidence')."""
    pytest.importorskip('vermin')
    bad = tmp_path / 'bad.py'
    bad.write_text('import math\nfrom functools import cached_property\nprint(math.prod([2, 3]))\n')
    proc = subprocess.run([VERMIN, '--target=3.7-', '--violations', '--no-tips', str(bad)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode != 0 and '3.8' in proc.stdout
