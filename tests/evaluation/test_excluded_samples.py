"""Samples skipped by ``--skip-bad-samples`` (issue 30 part 4) as the evaluation states them: the fingerprint
line and ``--json`` say ``N samples excluded`` and list them; ``kradar-eval --excluded-samples`` on the full
infos and the results without those frames scores what the infos without them score."""
import json

from kradar_plugin.evaluation.cli import main
from kradar_plugin.evaluation.command_line import excluded_sidecar, read_excluded, write_excluded
from kradar_plugin.evaluation.report import excluded_text

from .test_conditions_paths import _dump, _infos

GONE = [(3, 'ValueError', 'EOF: reading array header'), (17, 'RuntimeError', 'CUDA out of memory')]


def _failures(infos):
    return [dict(index=i, identity=[['label_file', infos[i]['annos']['label_file']], ['sequence', '1']],
                 type=t, message=m, stage='loading', rank=0) for i, t, m in GONE]


def test_fingerprint_json_and_offline_command_state_the_excluded_samples(tmp_path, capsys):
    infos, results, _ = _infos()
    gone = set(i for i, _, _ in GONE)
    kept = [r for i, r in enumerate(results) if i not in gone]
    results_path = _dump(tmp_path / 'results_epoch_0.pkl', kept)
    listed = write_excluded(results_path, _failures(infos))
    assert listed == excluded_sidecar(results_path) == str(tmp_path / 'results_epoch_0.excluded.json')
    common = ['--box-convention', 'mmdet3d<1.0', '--protocol', 'legacy', '--classes', 'Sedan']
    assert main(['--infos', _dump(tmp_path / 'infos.pkl', infos), '--results', results_path, '--excluded-samples',
                 listed, '--json', str(tmp_path / 'a.json')] + common) == 0
    printed = capsys.readouterr().out
    assert main(['--infos', _dump(tmp_path / 'without.pkl', [x for i, x in enumerate(infos) if i not in gone]),
                 '--results', results_path, '--json', str(tmp_path / 'b.json')] + common) == 0
    capsys.readouterr()
    a, b = (json.load(open(str(tmp_path / n))) for n in ('a.json', 'b.json'))
    assert a['metrics'] == b['metrics'] and a['logged_metrics'] == b['logged_metrics']
    line = '2 samples excluded: index 3 (label_file 1,00003.txt), index 17 (label_file 4,00017.txt)'
    assert a['fingerprint'] == b['fingerprint'] + '; ' + line and line in printed
    assert a['samples_excluded'] == 2 and 'excluded_samples' not in b
    assert a['excluded_samples'][1] == {'index': 17, 'identity': {'label_file': '4,00017.txt', 'sequence': '1'},
                                        'type': 'RuntimeError', 'message': 'CUDA out of memory', 'stage': 'loading'}
    # the file round-trips (label_file first), and a plain list of indices is accepted too
    assert [f['identity'][0][0] for f in read_excluded(listed)] == ['label_file'] * 2
    plain = tmp_path / 'plain.json'
    plain.write_text('[17, 3]')
    assert [f['index'] for f in read_excluded(str(plain))] == [3, 17]
    assert excluded_text(read_excluded(str(plain))) == '2 samples excluded: index 3, index 17'
