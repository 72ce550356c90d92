"""Bad inputs, the numba-free path and the CLI end to end."""
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.evaluation import kradar_eval

from ._data import frame, perfect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GT = frame([[0, 0, 20], [2, 0, 40]], [[4, 1.5, 2]] * 2, [0.0, 0.5])


def _bad(**changes):
    d = perfect(GT)
    d.update(changes)
    return d


@pytest.mark.parametrize('field,value,match', [
    ('location', np.array([[0, 0, 20], [np.nan, 0, 40]]), r"dt_annos\[1\]\['location'\]\[1\].*not finite"),
    ('score', np.array([0.5, np.inf]), r"dt_annos\[1\]\['score'\]\[1\]"),
    ('dimensions', np.array([[4, 1.5, 2], [4, -1.5, 2]]), r"dt_annos\[1\]\['dimensions'\]\[1\].*negative"),
    ('score', np.array([0.5]), r"dt_annos\[1\]: field 'score' has 1 entries but 'name' has 2"),
])
def test_bad_values_name_frame_field_and_value(field, value, match):
    with pytest.raises(ValueError, match=match):
        kradar_eval([GT, GT], [perfect(GT), _bad(**{field: value})], ['Sedan'])


def test_frame_count_mismatch_and_missing_fields():
    with pytest.raises(ValueError, match='gt_annos has 2 frames but dt_annos has 1'):
        kradar_eval([GT, GT], [perfect(GT)], ['Sedan'])
    d = perfect(GT)
    del d['score']
    with pytest.raises(ValueError, match=r"dt_annos\[0\]: missing field\(s\) \['score'\]"):
        kradar_eval([GT], [d], ['Sedan'])
    with pytest.raises(ValueError, match='no K-Radar class'):
        kradar_eval([GT], [perfect(GT)], ['Car'])
    with pytest.raises(ValueError, match='unknown protocol'):
        kradar_eval([GT], [perfect(GT)], ['Sedan'], protocol='kitti')
    with pytest.raises(ValueError, match='unknown protocol setting'):
        kradar_eval([GT], [perfect(GT)], ['Sedan'], protocol='fixed', bins=3)


def test_missing_optional_fields_repaired_with_one_warning():
    g = dict((k, v) for k, v in GT.items() if k not in ('bbox', 'alpha', 'truncated', 'occluded'))
    d = dict((k, v) for k, v in perfect(GT).items() if k not in ('bbox', 'alpha'))
    import warnings
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        _, res = kradar_eval([g], [d], ['Sedan'], eval_types=['bbox', 'bev'], protocol='legacy')
    assert len(rec) == 1 and 'filled with defaults' in str(rec[0].message)
    for field in ('gt_annos.bbox', 'gt_annos.alpha', 'gt_annos.truncated', 'gt_annos.occluded', 'dt_annos.bbox',
                  'dt_annos.alpha'):
        assert field in str(rec[0].message)
    assert res['Sedan/bev@0.7'] == pytest.approx(100 / 11.)
    # fields the evaluation does not read are neither needed nor checked: fixed BEV/3D reads no 2D box,
    # truncation, occlusion or alpha
    g['bbox'] = 'not an array'
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        _, res = kradar_eval([g], [d], ['Sedan'], protocol='fixed')
    assert rec == [] and res['Sedan/bev@0.7'] == 100.0


_PLAIN_RUN = """
import json, sys, warnings
{setup}
import numpy as np
from kradar_plugin.evaluation import kradar_eval, _jit
from kradar_plugin.ops.numba_gate import NumbaFallbackWarning
from tests.evaluation._data import random_gt, noisy_dets
rs = np.random.RandomState(2)
g = [random_gt(rs, 4) for _ in range(6)]; d = [noisy_dets(rs, x, 2) for x in g]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    out = dict((p, kradar_eval(g, d, ['Sedan'], protocol=p)[1]) for p in ('legacy', 'fixed'))
mine = [str(w.message) for w in caught if issubclass(w.category, NumbaFallbackWarning)]
print(json.dumps({{'metrics': out, 'warnings': mine, 'mode': list(_jit.mode())}}))
"""

_INJECT_COMPILE_FAILURE = """
import numba
try:
    from numba.core.errors import TypingError
except ImportError:  # numba < 0.49 (EchoFusion's 0.48)
    from numba.errors import TypingError
real_njit = numba.njit
class Uncompilable(object):
    def __init__(self, fn):
        self.py_func = fn
    def compile(self, signature):
        raise TypingError('injected: cannot determine Numba type of <class function>')
def njit(*args, **kwargs):
    def wrap(fn):
        return Uncompilable(fn) if fn.__name__ == 'frame_events' else real_njit(*args, **kwargs)(fn)
    return wrap
numba.njit = njit
"""


def _plain_run(setup, env=None):
    proc = subprocess.run([sys.executable, '-c', _PLAIN_RUN.format(setup=setup)], cwd=ROOT,
                          env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _same_as_here(plain):
    from ._data import random_gt, noisy_dets
    rs = np.random.RandomState(2)
    g = [random_gt(rs, 4) for _ in range(6)]
    d = [noisy_dets(rs, x, 2) for x in g]
    for p in ('legacy', 'fixed'):
        here = kradar_eval(g, d, ['Sedan'], protocol=p)[1]
        assert plain[p].keys() == here.keys()
        assert np.allclose([plain[p][k] for k in here], [here[k] for k in here], rtol=0, atol=1e-9)
        assert any(v > 0 for v in here.values())


@pytest.mark.parametrize('setup,cause', [
    ("sys.modules['numba'] = None", "numba is not importable (ModuleNotFoundError"),
    (_INJECT_COMPILE_FAILURE, 'compiling frame_events failed: TypingError: injected'),
])
def test_plain_python_fallback_warns_once_and_gives_same_numbers(setup, cause):
    out = _plain_run(setup, env={'KRADAR_IOU_BACKEND': 'numpy'})
    assert len(out['warnings']) == 1 and cause in out['warnings'][0], out['warnings']
    assert 'KRADAR_EVAL_NO_NUMBA=1' in out['warnings'][0]
    assert out['mode'][0] == 'plain' and cause in out['mode'][1]
    _same_as_here(out['metrics'])


def test_plain_python_by_choice_is_quiet():
    out = _plain_run('', env={'KRADAR_EVAL_NO_NUMBA': '1'})
    assert out['warnings'] == [] and out['mode'] == ['plain', 'KRADAR_EVAL_NO_NUMBA=1']
    _same_as_here(out['metrics'])


def _run_cli(args, cwd, *python_flags):
    """``kradar-eval`` through its console-script entry (kradar_cli.eval_main)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('KRADAR_PLUGIN_REGISTER', None)
    code = 'import sys, kradar_cli; sys.exit(kradar_cli.eval_main(sys.argv[1:]))'
    return subprocess.run([sys.executable] + list(python_flags) + ['-c', code] + args, cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def _pickles(tmp_path, gts, dts):
    for name, obj in (('gt.pkl', gts), ('dt.pkl', dts)):
        with open(str(tmp_path / name), 'wb') as f:
            pickle.dump(obj, f)
    return ['--gt-annos', str(tmp_path / 'gt.pkl'), '--dt-annos', str(tmp_path / 'dt.pkl')]


def test_cli_end_to_end(tmp_path):
    gts = [GT, frame(np.zeros((0, 3)), np.zeros((0, 3)), [])]
    dts = [perfect(GT), frame([[0, 0, 30]], [[4, 1.5, 2]], [0.0], scores=[0.99])]
    files = _pickles(tmp_path, gts, dts)
    out_json = str(tmp_path / 'm.json')
    plots = str(tmp_path / 'plots')
    base = files + ['--classes', 'Sedan', '--protocol', 'all', '--eval-types', 'bev', '3d', '--json', out_json]
    try:
        import matplotlib  # noqa: F401
        has_mpl = True
    except ImportError:
        has_mpl = False
    if not has_mpl:
        proc = _run_cli(base + ['--plot-dir', plots], str(tmp_path))
        assert proc.returncode == 2 and '--plot-dir needs matplotlib' in proc.stderr
    proc = _run_cli(base + (['--plot-dir', plots] if has_mpl else []), str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    # one compact table: legacy, kradar, 4drmr, revised, fixed and fixed - legacy side by side, then fixed by
    # distance, then one scoring line per protocol
    lines = proc.stdout.splitlines()
    assert 'fixed - legacy' in lines[1] and '=== protocol' not in proc.stdout
    # 2 GT, two TPs; the FP (0.99) is in the frame without GT: legacy, kradar and revised drop that frame
    # (K-Radar's pipeline never writes it), so precision is 1 at both thresholds: 11-of-41 reads 1 of 11
    # points, 100 / 11 = 9.09; revised averages the 2 of 41 filled points, 100 * 2 / 41 = 4.88. fixed keeps
    # the frame: the FP ranks first, R40 precision 2/3 = 66.67 at every IoU; 4drmr is kradar's 11 points
    row = [l for l in lines if l.startswith('Sedan bev')][0]
    cells = [c.split() for c in row.split('|')[1:7]]
    assert cells[0] == ['9.09'] * 3 and cells[1] == ['9.09'] * 3 and cells[2] == ['9.09'] * 3
    assert cells[3] == ['4.88'] * 3 and cells[4] == ['66.67'] * 3 and cells[5] == ['+57.58'] * 3
    scoring = [l for l in lines if l.startswith('K-Radar scoring: protocol ')]
    assert [l.split(';')[0].split()[-1] for l in scoring] == ['legacy', 'kradar', '4drmr', 'revised', 'fixed']
    assert 'z_center 0.5' in scoring[2] and 'AP 11 points' in scoring[2] and 'labels unknown' in scoring[2]
    assert 'region as given (not filtered here)' in scoring[0] and 'confidence every detection' in scoring[0]
    assert 'fixed by distance' in proc.stdout
    payload = json.load(open(out_json))
    assert payload['protocol'] == 'all'
    assert set(payload['metrics']) == {'legacy', 'kradar', '4drmr', 'revised', 'fixed'}
    assert payload['fingerprint']['4drmr'] == scoring[2]
    assert payload['metrics']['fixed']['Sedan/bev@0.5'] == pytest.approx(200 / 3.)
    assert payload['metrics']['legacy']['Sedan/bev@0.5'] == pytest.approx(100 / 11.)
    assert payload['metrics']['revised']['Sedan/bev@0.5'] == pytest.approx(200 / 41.)
    assert 'Sedan/3d@0.7/0-30m' in payload['metrics']['fixed']
    if has_mpl:
        _check_pngs(plots)
    single = _run_cli(files + ['--json', out_json, '--iou-mode', 'hard'], str(tmp_path))
    assert single.returncode == 0, single.stderr
    # one protocol: its own table, EchoFusion's text for legacy (what the dataset logs online)
    assert single.stdout.startswith('=== protocol: legacy ===\nSedan AP@0.70, 0.70, 0.70:\nbbox AP:')
    assert 'K-Radar scoring: protocol legacy; AP 11 points (every 4th of 41); z_center 1.0; IoU 0.7;' in single.stdout
    assert 'class / metric' not in single.stdout
    full = _run_cli(files + ['--full', '--protocol', 'fixed', '--eval-types', 'bev'], str(tmp_path))
    assert '=== protocol: fixed ===' in full.stdout and 'fixed by distance' in full.stdout
    payload = json.load(open(out_json))
    assert payload['protocol'] == 'legacy'
    assert set(payload['metrics']) == set('Sedan/{}@0.7'.format(m) for m in ('bev', '3d'))


def _check_pngs(plots):
    pngs = sorted(os.listdir(plots))
    # a PNG per protocol, metric and IoU (5 x 2 x 3) and an overview per protocol and class (5 x 1)
    assert len(pngs) == 5 * 2 * 3 + 5 and all(p.endswith('.png') for p in pngs)
    assert sorted(p for p in pngs if p.endswith('_overview.png')) == [
        '4drmr_Sedan_overview.png', 'fixed_Sedan_overview.png', 'kradar_Sedan_overview.png',
        'legacy_Sedan_overview.png', 'revised_Sedan_overview.png']
    for name in (pngs[0], 'fixed_Sedan_overview.png'):
        with open(os.path.join(plots, name), 'rb') as f:
            assert f.read(8) == b'\x89PNG\r\n\x1a\n'


def test_cli_progress_bar_over_5000_frames(tmp_path):
    gts = [GT] * 5001
    dts = [perfect(GT)] * 5001
    files = _pickles(tmp_path, gts, dts)
    proc = _run_cli(files + ['--eval-types', 'bev'], str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert 'K-Radar legacy (5001 frames)' in proc.stderr          # tqdm or the text bar, on stderr
    assert '4/4' in proc.stderr                                   # validation + 3 curves
    quiet = _run_cli(files + ['--eval-types', 'bev', '--no-progress'], str(tmp_path))
    assert quiet.returncode == 0 and 'K-Radar legacy' not in quiet.stderr
    small = _pickles(tmp_path, gts[:5000], dts[:5000])
    assert 'K-Radar legacy' not in _run_cli(small + ['--eval-types', 'bev'], str(tmp_path)).stderr


def test_text_bar_when_tqdm_is_missing():
    import io
    from kradar_plugin.progress import TextBar, make_bar
    assert make_bar(5000) is None and make_bar(10 ** 6, enabled=False) is None and make_bar(5001) is not None
    out = io.StringIO()
    bar = TextBar(out, width=10)
    bar.start(4, 'K-Radar fixed (6000 frames)')
    for _ in range(4):
        bar.update(1)
    bar.close()
    assert out.getvalue().startswith('K-Radar fixed (6000 frames) [##########] 4/4 ')


def test_console_scripts_never_register_frameworks(tmp_path):
    """kradar-eval / kradar-doctor enter through kradar_cli, which turns registration off: no torch, mmcv
    or mmdet module is imported (python -X importtime lists every import)."""
    with open(os.path.join(ROOT, 'setup.py')) as f:
        setup_py = f.read()
    assert "'kradar-eval=kradar_cli:eval_main'" in setup_py and "'kradar-doctor=kradar_cli:doctor_main'" in setup_py
    assert "py_modules=['kradar_cli']" in setup_py
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('KRADAR_PLUGIN_REGISTER', None)
    for tool, args in (('eval_main', ['--help']), ('doctor_main', ['--help'])):
        code = 'import sys, kradar_cli; sys.exit(kradar_cli.{}({!r}))'.format(tool, args)
        proc = subprocess.run([sys.executable, '-X', 'importtime', '-c', code], cwd=str(tmp_path), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        imported = [line.split('|')[-1].strip() for line in proc.stderr.splitlines() if line.startswith('import time:')]
        assert 'kradar_plugin' in imported and 'usage:' in proc.stdout
        heavy = [m for m in imported if m.split('.')[0] in ('torch', 'mmcv', 'mmdet', 'mmdet3d', 'mmengine', 'numba')]
        assert heavy == [], (tool, heavy[:10])


def test_cli_errors_are_one_line(tmp_path):
    files = _pickles(tmp_path, [GT, GT], [perfect(GT)])
    proc = _run_cli(files, str(tmp_path))
    assert proc.returncode == 2
    assert 'gt_annos has 2 frames but dt_annos has 1' in proc.stderr and 'Traceback' not in proc.stderr
    proc = _run_cli(files[:2], str(tmp_path))
    assert proc.returncode == 2 and 'give either' in proc.stderr
