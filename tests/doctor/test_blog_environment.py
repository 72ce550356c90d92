"""The K-Radar/EchoFusion blog's environment must yield exactly the failures that user hit, nothing else.

Planned environment (issue 5): python 3.7.16, torch 1.10.0, CUDA 11.3, mmcv-full 1.4.0, mmdet 2.19.0,
mmseg 0.20.0, mmdet3d 0.17.3, numba 0.48.0, numpy 1.20.3 (= numpy-base), yapf 0.40.2. Expected, from the facts:

FAIL numba-numpy: numba <= 0.50.x wheels on numpy >= 1.20 raise "expected dtype object, got
    'numpy.dtype[float64]'" (rotate-iou.md failure mode 7; fixed in numba 0.51.0). 0.48.0 <= 0.50, 1.20.3 >= 1.20.
FAIL numba-cuda: numba <= 0.52 with a CUDA >= 11.2 toolkit -> NvvmError "parse expected comma after load's
    type" (failure mode 1). 0.48.0 <= 0.52, 11.3 >= 11.2.
FAIL yapf: yapf >= 0.40.2 with mmcv < 1.7.2 -> "FormatCode() got an unexpected keyword argument 'verify'"
    (environment.md section 3). 0.40.2 >= 0.40.2, 1.4.0 < 1.7.2.
Not failures:
- mmdet3d 0.17.3's requirements pin numpy<1.20 (and numba==0.48.0): the violated pin IS the numba/numpy FAIL
  above, so it is named in that finding's fix rather than reported twice.
- mmcv ranges: mmdet 2.19 asserts mmcv-full 1.3.8..1.5.0; mmdet3d 0.17.3 asserts mmcv 1.3.8..1.5.0, mmdet
  2.14.0..3.0.0, mmseg 0.14.1..1.0.0 -> 1.4.0, 2.19.0, 0.20.0 all pass (section 3 tables, asserts use <=).
- numba 0.48 supports Python 3.6-3.8 (compat matrix) -> 3.7.16 is fine; numpy == numpy-base.
- No driver/GPU facts were given (and none on the test machine is used): driver/GPU checks are skipped.
"""
from kradar_plugin.doctor import run_checks, format_report

from .helpers import BLOG, MACHINE_INDEPENDENT, by_status, judge, result

EXPECTED_FAILS = ['numba-cuda', 'numba-numpy', 'yapf']


def test_blog_environment_pure_rules():
    results = judge(BLOG)
    assert by_status(results, 'FAIL') == EXPECTED_FAILS
    assert by_status(results, 'WARN') == []
    assert "numpy.dtype[float64]" in result(results, 'numba-numpy').reason
    assert "numba>=0.53" in result(results, 'numba-cuda').fix
    assert "parse expected comma" in result(results, 'numba-cuda').reason
    assert result(results, 'yapf').fix == "pip install 'yapf==0.40.1'"
    assert result(results, 'mmcv-range').status == 'OK'


def test_blog_environment_through_run_checks():
    """Same through the public API, with this machine's installed packages present but overridden."""
    results = run_checks(assume=BLOG, quick=True, probes=MACHINE_INDEPENDENT)
    assert by_status(results, 'FAIL') == EXPECTED_FAILS
    assert by_status(results, 'WARN') == []
    text = format_report(results, statuses=('FAIL',))
    lines = text.splitlines()
    assert sum(l.startswith('FAIL ') for l in lines) == 3 and text.count('fix: ') == 3
    assert 'kradar-doctor: FAIL (3 fail' in text


def test_suggested_fixes_clear_the_blog_failures():
    """Applying the three fixes (numba 0.53, yapf 0.40.1) leaves no FAIL: the fixes are consistent."""
    fixed = BLOG.replace('numba=0.48.0', 'numba=0.53.0').replace('yapf=0.40.2', 'yapf=0.40.1')
    assert by_status(judge(fixed), 'FAIL') == []


def test_conda_numpy_record_vs_numpy_base():
    """numpy=1.19.5 pinned, but numpy-base 1.20.3 is what imports (conda#7481): the mismatch itself FAILs, and
    numba 0.48 still meets numpy 1.20.3 -> the dtype TypeError, explained as coming from numpy-base."""
    results = judge('python=3.7.16,numba=0.48.0,numpy=1.19.5,numpy-base=1.20.3')
    assert by_status(results, 'FAIL') == ['numba-numpy', 'numpy-base']
    assert 'numpy-base' in result(results, 'numba-numpy').reason
    assert result(results, 'numpy-base').fix == 'conda install numpy=1.19.5 numpy-base=1.19.5'
    # The consistent pin is clean.
    assert by_status(judge('python=3.7.16,numba=0.48.0,numpy=1.19.5,numpy-base=1.19.5'), 'FAIL') == []
