"""The numba gate is one decision for the whole process: a numba / numpy pair that the version facts refuse
turns numba off for the rotated-IoU backends, the frame blocks AND the evaluator's kernels, with one warning.
The refused pair is faked as the backend-choice tests fake a driver: in the environment (a sitecustomize that
gives the installed numba an older release's version number), never by stubbing the code under test."""
import json
import textwrap

import numpy as np
import pytest

from kradar_plugin.facts import NUMBA_SERIES, numba_numpy_findings
from tests.evaluation._data import noisy_dets, random_gt
from tests.ops.test_backend_choice import run_python

REFUSED = '''
import json, warnings
import numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    from kradar_plugin.evaluation import _jit, kradar_eval, statistics
    from kradar_plugin.ops import backend_choice, numba_gate, rotate_iou_eval, rotate_iou_frames
    from tests.evaluation._data import random_gt, noisy_dets
    rs = np.random.RandomState(2)
    g = [random_gt(rs, 4) for _ in range(6)]
    d = [noisy_dets(rs, x, 2) for x in g]
    metrics = kradar_eval(g, d, ['Sedan'], protocol='fixed')[1]
    iou = rotate_iou_eval([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]])
    blocks = rotate_iou_frames([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]], [0, 1], [0, 1])
explicit = []
for call in (lambda: rotate_iou_eval([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], backend='numba'),
             lambda: rotate_iou_frames([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], [0, 1], [0, 1], backend='numba')):
    try:
        call()
    except backend_choice.BackendUnavailable as exc:
        explicit.append(str(exc))
print(json.dumps({'mode': list(_jit.mode()), 'compiled': hasattr(statistics.frame_events, 'signatures'),
                  'backend': backend_choice.select().name, 'values': [float(iou[0, 0]), float(blocks[0])],
                  'explicit': explicit, 'metrics': metrics,
                  'warnings': [[w.category.__name__, str(w.message)] for w in caught
                               if issubclass(w.category, numba_gate.FallbackWarning)]}))
'''


def _refused_release():
    """The oldest numba release whose pair with the installed numpy the version facts refuse."""
    for series in NUMBA_SERIES:
        if numba_numpy_findings(series.first, np.__version__):
            return series.first
    pytest.skip('no numba release in the facts refuses numpy ' + np.__version__)


def test_a_refused_numba_numpy_pair_turns_numba_off_everywhere_with_one_warning(tmp_path):
    pytest.importorskip('numba')
    fake = _refused_release()
    (tmp_path / 'sitecustomize.py').write_text(textwrap.dedent('''
        import numba
        numba.__version__ = {!r}
    '''.format(fake)))
    proc = run_python(REFUSED, {'PYTHONPATH': str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    # the evaluator's kernels fall back too: plain Python, for the facts' reason, never compiled
    assert got['mode'][0] == 'plain', got['mode']
    assert 'numba ' + fake in got['mode'][1] and np.__version__ in got['mode'][1], got['mode']
    assert got['compiled'] is False
    # the overlaps use numpy (hand values: 2 / 10); an explicit numba request says why it cannot run
    assert got['backend'] == 'numpy' and got['values'] == [pytest.approx(0.2, abs=1e-12)] * 2
    assert len(got['explicit']) == 2 and all(got['mode'][1] in e for e in got['explicit']), got['explicit']
    # ONE warning for the whole process (IoU, frame blocks and evaluator fell back), naming the reason
    assert len(got['warnings']) == 1, got['warnings']
    category, message = got['warnings'][0]
    assert category == 'NumbaFallbackWarning' and got['mode'][1] in message
    assert 'KRADAR_IOU_BACKEND=numpy' in message and 'KRADAR_EVAL_NO_NUMBA=1' in message
    # the same numbers as this process's evaluation (compiled where numba works here)
    from kradar_plugin.evaluation import kradar_eval
    rs = np.random.RandomState(2)
    g = [random_gt(rs, 4) for _ in range(6)]
    d = [noisy_dets(rs, x, 2) for x in g]
    here = kradar_eval(g, d, ['Sedan'], protocol='fixed')[1]
    assert sorted(got['metrics']) == sorted(here) and any(v > 0 for v in here.values())
    assert np.allclose([got['metrics'][k] for k in here], [here[k] for k in here], rtol=0, atol=1e-9)
