"""The in-place repairs of known framework bugs, on the installed mmcv: each one is applied only where the bug
is observed, warns once with its own category (``CompatRepairWarning``), and a second install is a no-op.

Run in a child process: the repair changes the live mmcv class for the rest of the process."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(code):
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def test_cpu_scatter_repair_applies_exactly_where_mmcv_adds_a_dimension():
    pytest.importorskip('mmcv.parallel')
    proc = run('''
        import warnings
        import torch
        from mmcv.parallel import _functions
        from kradar_plugin.compat import CompatRepairWarning, mmcv_cpu_scatter
        x = torch.arange(6.).reshape(2, 3)
        before = tuple(_functions.Scatter.forward([-1], [x])[0].shape)   # the installed mmcv, unrepaired
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            first = mmcv_cpu_scatter.install()
            second = mmcv_cpu_scatter.install()
        out = _functions.Scatter.forward([-1], [x, [x, x]])
        print(before, first, second, [w.category is CompatRepairWarning for w in caught],
              tuple(out[0].shape), torch.equal(out[0], x), [tuple(t.shape) for t in out[1]])
    ''')
    assert proc.returncode == 0, proc.stderr
    before, rest = proc.stdout.strip().splitlines()[-1].split(') ', 1)
    buggy = before != '(2, 3'
    if buggy:   # mmcv 1.4.0: (1, 2, 3) before; repaired once, with one warning of its own category
        assert rest == 'True False [True] (2, 3) True [(2, 3), (2, 3)]'
    else:       # fixed releases: nothing to repair, nothing said
        assert rest == 'False False [] (2, 3) True [(2, 3), (2, 3)]'
