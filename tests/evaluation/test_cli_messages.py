"""What a newcomer meets on the command line (issue 29 part 8): kradar_plugin's warnings as one line each,
the numba fallback said once and only where numba matters, progress during the bootstrap, and the plot
count naming the overview figures apart."""
import os
import pickle
import subprocess
import sys

import numpy as np

from ._data import noisy_dets, random_gt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_RUN = """
import sys
{setup}
from kradar_plugin import progress
progress.MIN_FRAMES = {min_frames}
from kradar_plugin.evaluation.cli import main
sys.exit(main(sys.argv[1:]))
"""

_NO_NUMBA = "sys.modules['numba'] = None"
_BROKEN_NUMBA = """
import numba
real_njit = numba.njit
def njit(*args, **kwargs):
    def wrap(fn):
        raise RuntimeError('injected: LLVM is broken')
    return wrap
numba.njit = njit
"""


def _files(tmp_path, n=30):
    rs = np.random.RandomState(3)
    gts = [random_gt(rs, 3) for _ in range(n)]
    dts = [noisy_dets(rs, g, 1) for g in gts]
    rows = [{'road_type': 'urban', 'capture_time': 'day', 'climate': 'fog', 'sequence': str(i // 5 + 1)}
            for i in range(n)]
    paths = []
    for name, obj in (('gt.pkl', gts), ('dt.pkl', dts)):
        with open(str(tmp_path / name), 'wb') as f:
            pickle.dump(obj, f)
        paths.append(str(tmp_path / name))
    import json
    with open(str(tmp_path / 'c.json'), 'w') as f:
        json.dump(rows, f)
    return ['--gt-annos', paths[0], '--dt-annos', paths[1], '--conditions', str(tmp_path / 'c.json')]


def _cli(args, setup='', min_frames=5000):
    env = dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0', KRADAR_IOU_BACKEND='numpy')
    env.pop('KRADAR_EVAL_NO_NUMBA', None)
    proc = subprocess.run([sys.executable, '-c', _RUN.format(setup=setup, min_frames=min_frames)] + args,
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def test_without_numba_a_small_set_says_nothing_and_a_large_one_one_note(tmp_path):
    args = _files(tmp_path)
    _, err = _cli(args, _NO_NUMBA)
    assert err == '', err      # numba would not matter for 30 frames: no warning, no path, no source line
    _, err = _cli(args + ['--no-progress'], _NO_NUMBA, min_frames=10)    # "large": over the progress-bar size
    assert err.splitlines() == ['kradar-eval: note: numba is not installed: the evaluator ran as plain Python on '
                                '30 frames (same numbers; pip install numba makes sets this large faster)']


def test_a_broken_numba_is_one_note_naming_the_error_and_kradar_warnings_are_one_line(tmp_path):
    args = _files(tmp_path)
    _, err = _cli(args + ['--classes', 'Sedan', 'Car'], _BROKEN_NUMBA)
    lines = err.splitlines()
    assert lines[0] == ("kradar-eval: warning: unknown class name(s) ['Car'] ignored; K-Radar classes are "
                        "['Sedan', 'Bus or Truck', 'Motorcycle', 'Bicycle', 'Bicycle Group', 'Pedestrian', "
                        "'Pedestrian Group', 'Background']")
    assert len(lines) == 2 and lines[1].startswith('kradar-eval: note: numba is installed but did not work here')
    assert 'injected: LLVM is broken' in lines[1] and 'pip install --upgrade numba' in lines[1]
    assert '.py:' not in err     # no file path and line of a raw Python warning


def test_bootstrap_progress_and_plot_counts(tmp_path):
    args = _files(tmp_path)
    _, err = _cli(args + ['--bootstrap', '7'], min_frames=10)
    # 30 frames > 10: the evaluation's bar, then the bootstrap's (total + fog + urban + day: 4 groups x 7)
    # (tqdm where installed, else the text bar)
    assert 'bootstrap (7 replicates x 4 groups)' in err and '28/28' in err, err
    out, _ = _cli(args + ['--plot-dir', str(tmp_path / 'plots'), '--protocol', 'kradar', '--eval-types', 'bev'])
    curves = [n for n in os.listdir(str(tmp_path / 'plots'))]
    line = [x for x in out.splitlines() if 'written to' in x and 'plots' in x][0]
    n_curves, n_overviews = int(line.split()[0]), int(line.split(' and ')[1].split()[0])
    assert n_curves + n_overviews == len(curves) and n_overviews >= 1
    assert line.endswith('precision-recall plots and {} overview figures written to {}'.format(
        n_overviews, tmp_path / 'plots'))
