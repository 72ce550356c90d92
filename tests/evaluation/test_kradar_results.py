"""K-Radar's printed results (``complete_results.txt``): the reader against text written the way K-Radar's
``validate_kitti_conditional`` writes it (its sequence of ``f.write`` calls, numpy float64 values printed with
``str``), errors naming file:line, and the round trip: our evaluation printed with ``--table kradar`` and read
back with ``--kradar-results`` gives the same groups and the same table."""
import json

import numpy as np
import pytest

from kradar_plugin.evaluation.cli import main
from kradar_plugin.evaluation.printed_results import condition_of, group_of, kradar_order, to_groups
from kradar_plugin.files.errors import KRadarFileError
from kradar_plugin.files.kradar_results import format_block, parse_results, read_results

from .test_conditions_paths import _dump, _infos


def _kradar_writes(conf_thr, condition, cls, ious, bev, ap3d):
    """One block as K-Radar's pipeline writes it: 'Conf thr: ' + str(conf_thr) + ..., each number str()'d and
    followed by a space, '3d  :' without a space after the colon, a blank line after."""
    text = 'Conf thr: ' + str(conf_thr) + ', Condition: ' + condition + '\n'
    text += 'cls: ' + cls + '\n'
    text += 'iou: ' + ''.join(str(v) + ' ' for v in ious) + '\n'
    text += 'bev: ' + ''.join(str(v) + ' ' for v in bev) + '\n'
    text += '3d  :' + ''.join(str(v) + ' ' for v in ap3d) + '\n\n'
    return text


IOUS = np.array([0.7, 0.5, 0.3])   # K-Radar's min_overlaps rows: hard, mod, easy


def _sample():
    rs = np.random.RandomState(1)
    text, expected = '', []
    for condition in ('all', 'urban', 'night', 'fog', 'unnormal'):
        for cls in ('sed', 'bus'):
            bev = rs.uniform(0, 100, 3) if condition != 'fog' or cls == 'sed' else np.zeros(3)
            ap3d = bev * rs.uniform(0.5, 1.0, 3)
            text += _kradar_writes(0.3, condition, cls, IOUS, bev, ap3d)
            expected.append((condition, cls, bev, ap3d))
    return text, expected


def test_reader_reads_kradar_written_text_exactly_and_the_writer_writes_it_byte_for_byte():
    text, expected = _sample()
    got = parse_results(text, 'complete_results.txt')
    assert got.thresholds() == ['0.3'] and got.notes == []
    assert got.conditions('0.3') == ['all', 'urban', 'night', 'fog', 'unnormal']
    for block, (condition, cls, bev, ap3d) in zip(got.blocks, expected):
        assert (block.condition, block.cls, block.conf) == (condition, cls, 0.3)
        assert block.ious == (0.7, 0.5, 0.3)
        assert block.bev == tuple(float(v) for v in bev) and block.ap3d == tuple(float(v) for v in ap3d)
    rewritten = ''.join(format_block(b.conf_text, b.condition, b.cls, b.ious, b.bev, b.ap3d) for b in got.blocks)
    assert rewritten == text


def test_groups_in_kradar_order_with_extra_names_and_zero_cells_marked_without_gt_counts():
    text, _ = _sample()
    blocks = parse_results(text, 'x').blocks
    groups, classes, ious, unverified = to_groups(blocks)
    assert list(groups) == ['total', 'road/urban', 'time/night', 'weather/fog', 'group/unnormal']
    assert classes == ['Sedan', 'Bus or Truck'] and ious == [0.3, 0.5, 0.7]
    assert unverified == set(('weather/fog', 'Bus or Truck/{}@{}'.format(m, i)) for m in ('bev', '3d')
                             for i in ('0.3', '0.5', '0.7'))
    # with GT counts, K-Radar's 0.0 of a class without GT becomes None (N/A); a counted class keeps its value
    counted, _, _, unverified = to_groups(blocks, {'weather/fog': {'Sedan': 4, 'Bus or Truck': 0}})
    assert unverified == set() or all(g != 'weather/fog' for g, _ in unverified)
    assert counted['weather/fog']['metrics']['Bus or Truck/bev@0.3'] is None
    assert counted['weather/fog']['metrics']['Sedan/bev@0.3'] == blocks[6].bev[2]
    assert counted['weather/fog']['gt'] == {'Sedan': 4, 'Bus or Truck': 0} and counted['total']['gt'] is None
    assert kradar_order(['group/x', 'weather/normal', 'time/day', 'road/highway', 'total']) == [
        'total', 'road/highway', 'time/day', 'weather/normal', 'group/x']
    assert group_of('heavysnow') == 'weather/heavysnow' and group_of('all') == 'total'


@pytest.mark.parametrize('cut, line, words', [
    (lambda t: t[:t.index('3d  :')], 5, 'the file is truncated'),                # ends before '3d  :'
    (lambda t: t.replace('cls: bus', '', 1), 8, "expected its 'cls:' line"),       # a blank where cls was
    (lambda t: t.replace('iou: 0.7 0.5 0.3 ', 'iou: 0.7 0.5 ', 1), 4, '3 numbers for 2 IoU thresholds'),
    (lambda t: t.replace('bev: ', 'bev: x', 1), 4, "field bev = 'x"),
    (lambda t: 'AP results\n' + t, 1, "expected a block's first line"),
    (lambda t: t.replace('Conf thr: 0.3', 'Conf thr: abc', 1), 1, "field Conf thr = 'abc'"),
])
def test_malformed_or_truncated_files_give_one_error_naming_file_and_line(tmp_path, cut, line, words):
    text, _ = _sample()
    path = tmp_path / 'complete_results.txt'
    path.write_text(cut(text))
    with pytest.raises(KRadarFileError) as err:
        read_results(str(path))
    message = str(err.value)
    assert message.startswith('{}:{}:'.format(path, line)) and words in message, message
    assert '\n' not in message


def test_an_empty_file_a_directory_and_a_repeated_run(tmp_path):
    empty = tmp_path / 'empty.txt'
    empty.write_text('\n\n')
    with pytest.raises(KRadarFileError, match='no .Conf thr'):
        read_results(str(empty))
    with pytest.raises(KRadarFileError, match='directory'):
        read_results(str(tmp_path))
    one = _kradar_writes(0.5, 'all', 'sed', IOUS, [1.0, 2.0, 3.0], [0.5, 1.0, 1.5])
    two = _kradar_writes(0.5, 'all', 'sed', IOUS, [4.0, 5.0, 6.0], [2.0, 3.0, 4.0])
    got = parse_results(one + two, 'r.txt')    # K-Radar appends on every run of an epoch
    assert len(got.blocks) == 1 and got.blocks[0].bev == (4.0, 5.0, 6.0)
    assert got.notes == ['r.txt:7 repeats the block of line 1 (Conf thr 0.5, Condition all, cls sed): K-Radar '
                         'appends to complete_results.txt on every run; the later block is used']


def _run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out, out.err


def test_round_trip_our_evaluation_in_kradar_format_reads_back_to_the_same_groups_and_table(tmp_path, capsys):
    infos, results, _ = _infos()
    infos_path = _dump(tmp_path / 'infos.pkl', infos, 2)
    base = ['--infos', infos_path, '--results', _dump(tmp_path / 'r.pkl', results), '--box-convention',
            'mmdet3d<1.0', '--protocol', 'kradar', '--classes', 'Sedan', 'Bus or Truck', '--score-threshold', '0.3',
            '0.5', '--group', 'late=5-8']
    printed, err = _run(base + ['--table', 'kradar'], capsys)
    assert printed.startswith('Conf thr: 0.3, Condition: all\ncls: sed\niou: 0.7 0.5 0.3 \nbev: ')
    assert err.count('kradar-eval: note: --table kradar: K-Radar scoring: protocol kradar;') == 2
    (tmp_path / 'complete_results.txt').write_text(printed)
    ours, _ = _run(base + ['--table', 'markdown', '--json', str(tmp_path / 'ours.json')], capsys)
    back, _ = _run(['--kradar-results', str(tmp_path / 'complete_results.txt'), '--infos', infos_path,
                    '--group', 'late=5-8', '--table', 'markdown', '--json', str(tmp_path / 'back.json')], capsys)
    table = lambda text: [line for line in text.splitlines() if line.startswith('|')]  # noqa: E731
    assert table(ours) and table(back) == table(ours)
    assert '| Class | Total | Normal | Overcast | Fog | Rain | Sleet | LightSnow | HeavySnow | late |' in back
    assert '(no GT?)' not in back
    mine = json.load(open(str(tmp_path / 'ours.json')))['score_thresholds']
    runs = json.load(open(str(tmp_path / 'back.json')))['runs']
    assert [r['conf_thr'] for r in runs] == ['0.3', '0.5']
    for run in runs:
        groups = mine[run['conf_thr']]['groups']
        # JSON objects are written with sorted keys: 'conditions' keeps K-Radar's order
        assert run['conditions'] == [condition_of(g) for g in kradar_order(groups)]
        assert run['conditions'][:4] == ['all', 'urban', 'day', 'night'] and run['conditions'][-1] == 'late'
        for name, entry in groups.items():
            # K-Radar prints per class BEV and 3D: no 2D, no mean over the classes ('Overall')
            kept = dict((k, v) for k, v in entry['metrics'].items() if '/bbox@' not in k and 'Overall/' not in k)
            assert run['groups'][name]['metrics'] == kept, name     # exactly: str(float) round trips
            assert run['groups'][name]['gt'] == entry['gt']
        assert run['groups']['total']['metrics']['Bus or Truck/3d@0.3'] is None     # no Bus or Truck GT
    # without GT counts the zeros of Bus or Truck are marked, not read as measured
    unmarked, _ = _run(['--kradar-results', str(tmp_path / 'complete_results.txt'), '--table', 'csv'], capsys)
    assert 'Bus or Truck,0.00 (no GT?),0.00 (no GT?)' in unmarked and 'give --infos' in unmarked


def test_several_files_are_labelled_by_path_and_options_that_cannot_apply_are_refused(tmp_path, capsys):
    for epoch in (10, 20):
        d = tmp_path / 'epoch_{}_total'.format(epoch) / '0.3'
        d.mkdir(parents=True)
        (d / 'complete_results.txt').write_text(_kradar_writes(0.3, 'all', 'sed', IOUS, [epoch, 2.0, 3.0],
                                                               [1.0, 1.0, 1.0]))
    paths = sorted(str(p) for p in tmp_path.glob('*/0.3/complete_results.txt'))
    out, _ = _run(['--kradar-results'] + paths + ['--table', 'latex'], capsys)
    assert ['=== {}, Conf thr 0.3 ==='.format(p) in out for p in paths] == [True, True]
    assert out.count('\\begin{tabular}') == 2 * 3     # two runs x three IoU thresholds
    assert main(['--kradar-results', paths[0], '--dt-annos', 'x.pkl']) == 2
    assert '--dt-annos cannot apply' in capsys.readouterr().err
