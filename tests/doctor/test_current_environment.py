"""Our own stacks must come out clean: no FAIL in the full .venv (and none in the light one)."""
import importlib.util
import os
import subprocess
import sys

import pytest

from kradar_plugin.doctor import format_report, run_checks
from kradar_plugin.doctor.probes.compile_test import run_compile_test


def _mmcv_full_importable():
    try:
        return importlib.util.find_spec('mmcv') is not None and importlib.util.find_spec('mmcv._ext') is not None
    except ImportError:
        return False


needs_full_stack = pytest.mark.skipif(not _mmcv_full_importable(),
                                      reason='mmcv-full is not importable here (light environment): the '
                                             '"current stack has no FAIL" check runs in the full .venv')


@needs_full_stack
def test_full_stack_has_no_fail():
    results = run_checks()
    assert [r for r in results if r.status == 'FAIL'] == [], format_report(results)
    by_name = dict((r.name, r) for r in results)
    # The full stack really was judged, not skipped: its versions, and the subprocess imports of mmcv/mmdet
    # (and mmdet3d/mmseg where installed: their .models and .datasets too).
    for name in ('numba-python', 'numba-numpy', 'mmcv-full', 'mmcv-range', 'openmmlab-mix', 'imports', 'yapf',
                 'mmcv-torch'):
        assert by_name[name].status == 'OK', by_name[name]
    assert 'mmdet.models' in by_name['imports'].reason
    if importlib.util.find_spec('mmdet3d') is not None:
        assert by_name['mmdet3d-numpy'].status == 'OK', by_name['mmdet3d-numpy']
        assert 'mmdet3d.datasets' in by_name['imports'].reason


@needs_full_stack
def test_full_stack_cli_exits_0():
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor'], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                          env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith('kradar-doctor: OK (0 fail')


def test_quick_checks_have_no_fail_here():
    results = run_checks(quick=True)
    assert [r for r in results if r.status == 'FAIL'] == [], format_report(results)


def test_compile_test_subprocess_reports_a_real_outcome():
    """The compile child on this stack's numba and toolkit: a report, and every failure in a compiler's words
    (tests/doctor/test_cuda_compile.py checks the outcomes against the facts)."""
    pytest.importorskip('numba')
    report = run_compile_test(['sm_80'])
    assert report['status'] in ('ok', 'fail') and report['archs'] == ['sm_80']
    if report['status'] == 'fail':
        errors = [report.get('detail')] + [r.get('error') for r in report['rows']]
        assert any(e and ('Error' in e or 'ptxas' in e or 'signal' in e) for e in errors), report
