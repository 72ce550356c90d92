"""User groups of sequences: each group equals an evaluation of its frames alone (listed out and evaluated
afresh), carries GT counts, intervals over its own sequences and the paired comparison; files (JSON, YAML,
split lists), bad input, the evaluator's settings and the mmcv 1.x ``evaluation`` dict."""
import json

import numpy as np
import pytest

from kradar_plugin.evaluation.cli import main
from kradar_plugin.evaluation.evaluator import KRadarEvaluator
from kradar_plugin.evaluation.groups import _mini_yaml, check, load_file, parse_option, resolve

from ._data import evaluated, noisy_dets, random_gt
from .test_conditions_paths import _dump, _infos


def _frames(n=60, seed=4):
    """Frames of sequences 1..12 (5 frames each), some without GT, conditions with the sequence."""
    rs = np.random.RandomState(seed)
    gts, dts, dts_b, rows = [], [], [], []
    for i in range(n):
        g = random_gt(rs, rs.randint(0, 4))
        gts.append(g)
        dts.append(noisy_dets(rs, g, 2))
        dts_b.append(noisy_dets(rs, g, 1, keep=0.9))
        rows.append({'road_type': 'urban', 'capture_time': 'day', 'climate': 'fog' if i % 2 else 'normal',
                     'sequence': '{:02d}'.format(i // 5 + 1)})   # zero-padded: '01' is sequence 1
    return gts, dts, dts_b, rows


def test_each_group_equals_an_evaluation_of_its_frames_alone_with_intervals_over_its_sequences():
    gts, dts, dts_b, rows = _frames()
    groups = resolve(['clean=1-4,9', 'noisy=4-6', 'none='])
    assert [g.sequences for g in groups] == [frozenset([1, 2, 3, 4, 9]), frozenset([4, 5, 6]), frozenset()]
    assert check(groups, rows) == ['groups clean and noisy overlap: both hold sequence 4 (allowed; their frames '
                                   'count in both)']
    out = evaluated(gts, dts, ['Sedan'], 'kradar', rows, dts_b, score_threshold=0.2, bootstrap=10, seed=1,
                    groups=groups).groups['kradar']
    assert list(out)[-3:] == ['group/clean', 'group/noisy', 'group/none'] and 'weather/fog' in out
    for g in groups[:2]:
        idx = [i for i in range(len(gts)) if (i // 5 + 1) in g.sequences and len(gts[i]['name'])]
        alone = evaluated([gts[i] for i in idx], [dts[i] for i in idx], ['Sedan'], 'kradar',
                          score_threshold=0.2).evaluations[0]
        alone_b = evaluated([gts[i] for i in idx], [dts_b[i] for i in idx], ['Sedan'], 'kradar',
                            score_threshold=0.2).evaluations[0]
        entry = out['group/' + g.name]
        assert entry['frames'] == len(idx) and entry['gt'] == {'Sedan': sum(len(gts[i]['name']) for i in idx)}
        assert entry['sequences'] == len(set(i // 5 for i in idx))     # resampled: its own sequences
        for metric in ('bev', '3d'):
            for j, iou in enumerate((0.3, 0.5, 0.7)):
                key = 'Sedan/{}@{:g}'.format(metric, iou)
                assert entry['metrics'][key] == pytest.approx(float(alone.ap[metric][0, 0, j]), abs=1e-9)
                assert entry['delta'][key] == pytest.approx(float(alone_b.ap[metric][0, 0, j] -
                                                                  alone.ap[metric][0, 0, j]), abs=1e-9)
                lo, hi = entry['ci95'][key]
                assert 0.0 <= lo <= hi <= 100.0
    # an empty group: no frame, N/A everywhere
    assert out['group/none']['frames'] == 0 and set(out['group/none']['metrics'].values()) == {None}
    only = evaluated(gts, dts, ['Sedan'], 'kradar', rows, dts_b, score_threshold=0.2, groups=groups,
                     groups_only=True).groups['kradar']
    assert list(only) == ['total', 'group/clean', 'group/noisy', 'group/none']
    assert only['group/clean']['metrics'] == out['group/clean']['metrics']


def test_bad_input_names_what_is_wrong(tmp_path):
    _, _, _, rows = _frames()
    with pytest.raises(ValueError, match=r"group 'far' \(--group\): sequence 13,40-41 is not among the evaluated "
                                         r"frames' sequences \(1-12\)"):
        check(resolve(['far=40-41,13']), rows)
    for bad, words in (('clean', 'expected NAME=SEQUENCES'), ('all=1', 'group name'), ('x=1-b', "'1-b' is not"),
                       ('x=5-2', 'bad sequence range')):
        with pytest.raises(ValueError, match=words):
            parse_option(bad)
    with pytest.raises(ValueError, match="group 'a' is defined twice"):
        resolve(['a=1', 'a=2'])
    with pytest.raises(ValueError, match='need each frame.s sequence'):
        check(resolve(['a=1']), None)


def test_groups_files_json_yaml_and_split_lists(tmp_path):
    split = tmp_path / 'train_sleet.txt'
    split.write_text('21,00001_00002.txt\n21,00002_00003.txt\n23,00010_00011.txt')
    (tmp_path / 'g.json').write_text(json.dumps({'clean': '1-20,22', 'noisy': [30, '51-53'],
                                                 'sleet': 'train_sleet.txt'}))
    got = load_file(str(tmp_path / 'g.json'))
    assert [(g.name, sorted(g.sequences)) for g in got] == [
        ('clean', list(range(1, 21)) + [22]), ('noisy', [30, 51, 52, 53]), ('sleet', [21, 23])]
    yaml_text = '# RAF\nclean: 1-20, 22\nnoisy:\n  - 30\n  - 51-53\nsleet: train_sleet.txt\n'
    assert _mini_yaml(yaml_text, 'g.yaml') == {'clean': '1-20, 22', 'noisy': ['30', '51-53'],
                                               'sleet': 'train_sleet.txt'}
    (tmp_path / 'g.yaml').write_text(yaml_text)
    assert [(g.name, g.sequences) for g in load_file(str(tmp_path / 'g.yaml'))] == [(g.name, g.sequences)
                                                                                     for g in got]


def test_cli_groups_beside_or_instead_of_weathers_and_the_evaluator_settings(tmp_path, capsys):
    infos, results, results_b = _infos()    # sequences 1-8: normal 1-4, fog 5-8
    base = ['--infos', _dump(tmp_path / 'i.pkl', infos, 2), '--results', _dump(tmp_path / 'r.pkl', results),
            '--box-convention', 'mmdet3d<1.0', '--protocol', 'kradar', '--score-threshold', '0.3']
    (tmp_path / 'g.json').write_text(json.dumps({'early': '1-4', 'mid': '3-6'}))
    assert main(base + ['--groups', str(tmp_path / 'g.json'), '--table', 'markdown', '--json',
                        str(tmp_path / 'a.json'), '--bootstrap', '5']) == 0
    out = capsys.readouterr()
    assert '| Sleet | LightSnow | HeavySnow | early | mid |' in out.out
    assert 'kradar-eval: note: groups early and mid overlap: both hold sequence 3-4' in out.err
    groups = json.load(open(str(tmp_path / 'a.json')))['groups']
    # 'early' is exactly the normal weather (sequences 1-4): the same frames, the same numbers
    assert groups['group/early']['metrics'] == groups['weather/normal']['metrics']
    assert groups['group/early']['gt'] == groups['weather/normal']['gt'] and groups['group/mid']['sequences'] == 4
    assert main(base + ['--group', 'early=1-4', '--groups-only', '--table', 'csv']) == 0
    assert 'Class,Total,early\n' in capsys.readouterr().out
    assert main(base + ['--group', 'x=9']) == 2
    assert "sequence 9 is not among the evaluated frames' sequences (1-8)" in capsys.readouterr().err
    evaluator = KRadarEvaluator(['Sedan'], 'kradar', box_convention='mmdet3d<1.0', score_threshold=0.3,
                                groups={'early': [1, 2, '3-4']})
    evaluator.process(infos, results)
    evaluator.evaluate()
    assert evaluator.groups['kradar']['group/early']['metrics'] == groups['group/early']['metrics']
    assert evaluator.settings()['groups'] == ['early=1-4']
    again = KRadarEvaluator.from_settings(evaluator.settings())
    assert [g[:2] for g in again.user_groups] == [g[:2] for g in evaluator.user_groups]   # name, sequences
    assert '--group early=1-4' in evaluator.offline_command('r.pkl', 'i.pkl')


def test_mmcv1_evaluation_dict_takes_groups(tmp_path, caplog, capsys):
    """The 1.x dataset ``evaluate`` (the mixin on a plain class: no mmcv needed) with ``groups=`` as an
    ``evaluation`` dict puts the group in the logged table."""
    import logging
    from .test_conditions_paths import mixin_dataset
    infos, results, _ = _infos()
    dataset = mixin_dataset(infos, tmp_path)

    with caplog.at_level(logging.INFO, logger='kradar_plugin'):
        dataset.evaluate(results, protocol='kradar', groups={'late': '5-8'})
    logged = '\n'.join([r.getMessage() for r in caplog.records] + [capsys.readouterr().out])
    assert '| Class | Total | Normal | Overcast | Fog | Rain | Sleet | LightSnow | HeavySnow | late |' in logged
