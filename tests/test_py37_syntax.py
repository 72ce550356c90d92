"""The package, tools, configs and benchmarks must stay Python-3.7 compatible (users run 3.7):
checked statically with vermin, not by convention."""
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
    pytest.importorskip('vermin')
    bad = tmp_path / 'bad.py'
    bad.write_text('if (n := 3) > 2:\n    print(f"{n=}")\n')
    proc = subprocess.run([VERMIN, '--target=3.7-', '--violations', '--no-tips', str(bad)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode != 0 and '3.8' in proc.stdout
