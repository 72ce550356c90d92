"""The package as users install it: a wheel built from this checkout (PEP 517, ``pyproject.toml``) installed,
not editable, into a fresh virtual environment of this interpreter; the console scripts and an evaluation run
from a directory outside the checkout, and the version is the one ``kradar_plugin/version.py`` defines."""
import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.slow


def _run(cmd, cwd, env=None, timeout=600):
    proc = subprocess.run(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
    assert proc.returncode == 0, (cmd, proc.stdout[-2000:], proc.stderr[-3000:])
    return proc.stdout


def _version():
    with open(os.path.join(ROOT, 'kradar_plugin', 'version.py')) as f:
        return re.search(r"__version__ = '([^']+)'", f.read()).group(1)


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    wheels = tmp_path / 'wheels'
    # from a copy of the sources (setuptools writes build/ and *.egg-info next to setup.py); no build isolation:
    # the build needs setuptools and wheel, which every test environment has (no download)
    import shutil
    source = tmp_path / 'source'
    source.mkdir()
    for name in ('setup.py', 'pyproject.toml', 'kradar_cli.py', 'README.md'):
        shutil.copy(os.path.join(ROOT, name), str(source / name))
    for name in ('kradar_plugin', 'requirements'):
        shutil.copytree(os.path.join(ROOT, name), str(source / name),
                        ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
    _run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-w', str(wheels),
          str(source)], tmp_path)
    (wheel,) = [str(p) for p in wheels.iterdir() if p.name.endswith('.whl')]
    assert os.path.basename(wheel).startswith('kradar_plugin-{}-'.format(_version()))
    venv = tmp_path / 'venv'
    _run([sys.executable, '-m', 'venv', str(venv)], tmp_path)
    python = str(venv / 'bin' / 'python')
    env = dict((k, v) for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV'))
    # numpy (the only requirement) from wherever this interpreter's pip finds it, offline when cached
    _run([python, '-m', 'pip', 'install', '-q', '--disable-pip-version-check', wheel,
          'numpy=={}'.format(np.__version__)], tmp_path, env)
    outside = tmp_path / 'elsewhere'
    outside.mkdir()
    where = _run([python, '-c', 'import kradar_plugin, sys; print(kradar_plugin.__file__); '
                  'print(kradar_plugin.__version__); print(sorted(m for m in sys.modules if m.split(".")[0] in '
                  '("torch", "mmcv", "mmdet", "mmdet3d")))'], outside, env).splitlines()
    assert where[0].startswith(str(venv)) and where[1] == _version() and where[2] == '[]'
    for script in ('kradar-eval', 'kradar-doctor', 'kradar-create-data'):
        out = _run([str(venv / 'bin' / script), '--version'], outside, env)
        assert out.strip() == '{} {}'.format(script, _version())
    # an evaluation from the installed scripts: a K-Radar-format tree -> infos -> perfect detections
    tree = outside / 'tree'
    _run([python, '-c', 'from kradar_plugin.demo import tree; tree.generate_tree({!r}, frames=12, '
          'train_frames=4)'.format(str(tree))], outside, env)
    _run([str(venv / 'bin' / 'kradar-create-data'), '--root-path', str(tree), '--out-dir', 'infos', '--split-dir',
          str(tree / 'ImageSets'), '--no-progress'], outside, env)
    with open(str(outside / 'infos' / 'kradar_infos_val.pkl'), 'rb') as f:
        infos = pickle.load(f)
    gt = [dict((k, v) for k, v in i['annos'].items() if k != 'label_file') for i in infos]
    dt = [dict(g, score=np.linspace(0.9, 0.5, len(g['name'])) if len(g['name']) else np.zeros(0)) for g in gt]
    for name, obj in (('gt.pkl', gt), ('dt.pkl', dt)):
        with open(str(outside / name), 'wb') as f:
            pickle.dump(obj, f)
    args = ['--gt-annos', 'gt.pkl', '--dt-annos', 'dt.pkl', '--protocol', 'all', '--classes', 'Sedan']
    installed = _run([str(venv / 'bin' / 'kradar-eval')] + args, outside, env)
    checkout = _run([sys.executable, '-m', 'kradar_cli', 'eval'] + args, outside,
                    dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0'))
    assert installed == checkout and 'Sedan bev' in installed
