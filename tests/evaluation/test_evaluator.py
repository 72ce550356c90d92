"""``KRadarEvaluator``: batches, settings round trip and the offline command give the same numbers as the
other entry points (they all go through it, so these check its bookkeeping, not the AP)."""
import json

import pytest

from kradar_plugin.evaluation.evaluator import KRadarEvaluator

from .test_conditions_paths import _cli, _dump, _infos

SETTINGS = dict(protocol='kradar', eval_types=('bev', '3d'), benchmark='v2', score_threshold=0.3,
                box_convention='mmdet3d<1.0')


def test_batches_settings_and_the_dataset_entry_points_agree():
    infos, results, _ = _infos()
    whole = KRadarEvaluator(['Sedan'], **SETTINGS)
    whole.process(infos, results)
    metrics = whole.evaluate()
    batched = KRadarEvaluator.from_settings(json.loads(json.dumps(whole.settings())))
    for start in range(0, len(infos), 7):                    # batches, as a data loader hands them over
        batched.process(infos[start:start + 7], results[start:start + 7])
    assert batched.evaluate() == metrics
    assert batched.groups == whole.groups and sorted(whole.groups['kradar']) == [
        'road/urban', 'time/day', 'time/night', 'total', 'weather/fog', 'weather/normal']
    assert whole.groups['kradar']['total']['metrics'] == dict(
        (k, v) for k, v in metrics.items() if k.startswith('Sedan/'))
    batched.reset()
    with pytest.raises(ValueError, match='1 results for 2 infos'):
        batched.process(infos[:2], results[:1])
    assert batched.table() == whole.table() and '| Sedan |' in whole.table()
    # no conditions in the infos: no groups, no table, same metrics
    bare = [dict((k, v) for k, v in i.items() if k not in ('road_type', 'capture_time', 'climate')) for i in infos]
    plain = KRadarEvaluator(['Sedan'], **dict(SETTINGS, score_threshold=None))
    plain.process(bare, results)
    plain.evaluate()
    assert plain.groups is None and plain.table() is None


def test_offline_command_repeats_the_evaluation(tmp_path):
    infos, results, _ = _infos(seed=9)
    evaluator = KRadarEvaluator(['Sedan'], bootstrap=4, seed=2, **SETTINGS)
    evaluator.process(infos, results)
    metrics = evaluator.evaluate()
    infos_path, results_path = _dump(tmp_path / 'infos.pkl', infos), _dump(tmp_path / 'results.pkl', results)
    command = evaluator.offline_command(results_path, infos_path)
    assert '--benchmark v2' in command and '--score-threshold 0.3' in command and '--bootstrap 4' in command
    args = command.split()[1:]
    args = [a.replace("'", '') for a in args]
    proc = _cli(args + ['--json', str(tmp_path / 'm.json')], tmp_path)
    assert proc.returncode == 0, proc.stderr
    payload = json.load(open(str(tmp_path / 'm.json')))
    assert payload['groups'] == json.loads(json.dumps(evaluator.groups['kradar']))
    assert payload['metrics'] == dict((k, v) for k, v in metrics.items() if k.startswith('Sedan/'))
    # settings no kradar-eval option expresses: no command
    assert KRadarEvaluator(['Sedan'], distance_edges=(0, 40, 80)).offline_command('r.pkl', 'i.pkl') is None


def test_the_documented_python_api_runs_as_written(tmp_path, monkeypatch):
    """docs/evaluation.md's ``KRadarEvaluator`` example, executed as printed there (its names bound to test
    data: ``batches``, and the info pickle it loads), gives the evaluator's own metrics."""
    import os
    import re
    from tests.launching import ROOT
    docs = os.path.join(ROOT, 'docs', 'evaluation.md')
    with open(docs) as f:
        text = f.read()
    section = text[text.index('## From Python: `KRadarEvaluator`'):]
    code = re.search(r'```python\n(.*?)```', section, re.S).group(1)
    infos, results, _ = _infos(seed=4)
    monkeypatch.chdir(tmp_path)
    _dump(tmp_path / 'kradar_infos_val.pkl', infos)
    scope = {'batches': [(infos[:5], results[:5]), (infos[5:], results[5:])], 'print': lambda *a: None}
    exec(compile(code, docs, 'exec'), scope)
    direct = KRadarEvaluator(['Sedan'], protocol='kradar', score_threshold=0.3, box_convention='mmdet3d<1.0')
    direct.process(infos, results)
    assert scope['metrics'] == direct.evaluate() and 'Sedan/bev@0.3' in scope['metrics']
    assert scope['evaluator'].table('markdown') and len(scope['infos']) == len(infos)
