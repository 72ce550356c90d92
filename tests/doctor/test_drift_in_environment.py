"""The blog's two version drifts, really installed, judged by ``kradar-doctor`` inside the environment.

yapf >= 0.40.2 next to mmcv-full <= 1.7 (``FormatCode() got an unexpected keyword argument 'verify'``), and
numba 0.48 next to numpy >= 1.20 (``expected dtype object, got 'numpy.dtype[float64]'``): the drifted
package is installed into a temporary directory put first on ``PYTHONPATH`` (the environment itself is not
touched), the doctor runs there without ``--assume``, and the failure it names is also reproduced for real
in the same interpreter setup, so the finding is not only a table lookup. Wheels come from
``<venv>/drift-wheels`` (filled by ``tools/setup_env.sh echofusion``) or the package index.
"""
import os
import os.path as osp
import subprocess
import sys
import textwrap

import pytest

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
WHEELS = osp.join(sys.prefix, 'drift-wheels')


def _version(dist):
    try:
        import importlib_metadata as md  # Python 3.7
    except ImportError:
        from importlib import metadata as md
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _overlay(tmp_path, requirement):
    """A directory holding ``requirement`` alone (no dependencies), from the local wheels or the index."""
    target = str(tmp_path / 'overlay')
    cmd = [sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--disable-pip-version-check',
           '--target', target, requirement]
    if osp.isdir(WHEELS):
        cmd[5:5] = ['--no-index', '--find-links', WHEELS]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if proc.returncode != 0:
        pytest.skip('cannot install {} (no local wheel, no index): {}'.format(
            requirement, proc.stdout.decode()[-400:]))
    return target


def _run(overlay, code, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([overlay, ROOT]), KRADAR_PLUGIN_REGISTER='0')
    if args:
        cmd = [sys.executable, '-m', 'kradar_plugin.doctor'] + list(args)
    else:
        cmd = [sys.executable, '-c', textwrap.dedent(code)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return proc.returncode, proc.stdout.decode('utf-8', 'replace')


def _mmcv_1x():
    v = _version('mmcv-full')
    return v is not None and v < '1.7.2'


@pytest.mark.skipif(not _mmcv_1x(), reason="needs mmcv-full < 1.7.2 (the releases whose Config.pretty_text "
                                           "passes verify= to yapf): the 1.x and EchoFusion stacks")
def test_yapf_drift_named_with_fix_and_repaired_by_the_plugin(tmp_path):
    overlay = _overlay(tmp_path, 'yapf==0.43.0')
    rc, out = _run(overlay, None, '--quick')
    assert 'yapf 0.43.0' in out and "unexpected keyword argument 'verify'" in out, out
    assert "pip install 'yapf==0.40.1'" in out, out
    assert rc != 0, out
    # the failure is real here, and importing the plugin (as a config's custom_imports does) repairs it
    rc, out = _run(overlay, '''
        import warnings
        from mmcv import Config
        cfg = Config(dict(model=dict(type='X', depth=3)))
        try:
            cfg.pretty_text
        except TypeError as exc:
            print('without plugin:', exc)
        import kradar_plugin.compat.yapf_format as repair
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            assert repair.install()
        print('warnings:', len(caught), caught[0].message)
        print('with plugin:', cfg.pretty_text.replace('\\n', ' '))
    ''')
    assert rc == 0, out
    assert "without plugin: FormatCode() got an unexpected keyword argument 'verify'" in out, out
    assert 'warnings: 1' in out and 'yapf==0.40.1' in out, out
    assert "with plugin: model = dict(type='X', depth=3)" in out, out


@pytest.mark.skipif(_version('numba') != '0.48.0' or _version('numpy') is None or _version('numpy') >= '1.20',
                    reason="needs EchoFusion's numba 0.48.0 with its numpy < 1.20 (the drift is then installed)")
def test_numba_numpy_drift_named_with_fix_and_the_iou_still_runs(tmp_path):
    overlay = _overlay(tmp_path, 'numpy==1.20.3')
    rc, out = _run(overlay, None, '--quick')
    assert 'FAIL  numba-numpy       numba 0.48.0 with numpy 1.20.3' in out and 'numpy.dtype[float64]' in out, out
    assert "pip install 'numpy<1.20'" in out, out
    assert rc != 0, out
    rc, out = _run(overlay, '''
        import numpy, numba
        print('numpy', numpy.__version__, 'numba', numba.__version__)
        @numba.njit
        def total(a):
            s = 0.0
            for v in a:
                s += v
            return s
        try:
            total(numpy.ones(3))
        except Exception as exc:
            print('numba kernel:', type(exc).__name__, str(exc).splitlines()[0])
        from kradar_plugin.ops import rotate_iou_eval
        print('iou', round(float(rotate_iou_eval([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]])[0, 0]), 6))
    ''')
    assert rc == 0, out
    assert 'numpy 1.20.3 numba 0.48.0' in out, out
    assert "expected dtype object, got 'numpy.dtype[float64]'" in out, out
    # overlap 1 x 2 = 2, union 4 + 8 - 2 = 10
    assert 'iou 0.2' in out, out
