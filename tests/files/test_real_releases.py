"""K-Radar's real label releases and split lists, read as K-Radar reads them: every quirk of the real files
(reproduced by ``_quirky_tree``), K-Radar's own loader as the oracle, the converter's summary and
``--strict``, split lists as users keep them, and the audit. ``KRADAR_REAL_LABELS`` names a folder of real
labels to compare frame by frame (never copied into the repository: CC BY-NC-ND)."""
import json
import math
import os
import pickle

import numpy as np
import pytest

from kradar_plugin.files import KRadarFileError, create_data
from kradar_plugin.files.labels import read_label
from kradar_plugin.files.radar_frame import kradar_objects
from kradar_plugin.files.splits import read_split
from kradar_plugin.files.tree import REVISED, KRadarTree

from . import _quirky_tree as qt
from . import _snapshots as snap

need_kradar = pytest.mark.skipif(snap.kradar_repo() is None, reason='no K-Radar snapshot (KRADAR_REPO)')


@pytest.fixture(scope='module')
def quirky(tmp_path_factory):
    return qt.write_tree(str(tmp_path_factory.mktemp('quirky')))


def _convert(tree, out, *extra, **kw):
    split_dir = kw.get('split_dir', tree['split_dir'])
    return create_data.main(['--root-path', tree['root'], '--out-dir', str(out), '--split-dir', split_dir,
                             '--labels-dir', tree['labels_dir'], '--no-progress'] + list(extra))


def _load(path):
    with open(str(path), 'rb') as f:
        return pickle.load(f)


def _same_modulo_2pi(a, b):
    return abs(math.remainder(a - b, 2 * math.pi)) < 1e-12


@need_kradar
@pytest.mark.parametrize('version', ['v1.0', 'v2.0', 'v2.1'])
@pytest.mark.parametrize('only_r', [False, True])
def test_every_frame_equals_kradar_loader(quirky, version, only_r):
    """Each object equals K-Radar's get_label's (class, box, track, visibility); yaw compared modulo 2 pi."""
    tree = KRadarTree(quirky['root'], version, quirky['labels_dir'])
    key = version.replace('.', '_')
    loader = snap.kradar_loader(key, only_r=only_r)
    compared = 0
    for seq, _, name, _, _ in quirky['frames']:
        path = tree.label_path(seq, name)
        theirs = loader.get_label(snap.kradar_item(quirky['root'], seq, {key: path}))['meta']['label']
        mine = kradar_objects(read_label(path, version), tree.calibration(seq), only_r=only_r)
        assert len(mine) == len(theirs), path
        for (n1, b1, t1, a1), (n2, b2, t2, a2) in zip(mine, theirs):
            assert (n1, t1, a1) == (n2, t2, a2), path
            assert b1[:3] + b1[4:] == b2[:3] + b2[4:] and _same_modulo_2pi(b1[3], b2[3]), path
        compared += len(mine)
    assert compared > (20 if only_r else 40)
    if version == 'v2.1':
        kept = set(o[3] for seq, _, name, _, _ in quirky['frames']
                   for o in kradar_objects(read_label(tree.label_path(seq, name), version), tree.calibration(seq),
                                           only_r=only_r))
        assert kept == ({'R'} if only_r else {'R', 'L', 'L1', 'LL', 'LR', 'l'})


def test_v21_converts_keeps_quirks_and_summarises_them(quirky, tmp_path, capsys):
    assert _convert(quirky, tmp_path / 'out', '--label-version', 'v2.1') == 0
    err = capsys.readouterr().err
    infos = _load(tmp_path / 'out' / 'kradar_infos_train.pkl') + _load(tmp_path / 'out' / 'kradar_infos_test.pkl')
    avail = [v for i in infos for v in i['annos']['avail']]
    names = [v for i in infos for v in i['annos']['name']]
    rots = np.concatenate([i['annos']['rotation_y'] for i in infos])
    for _, _, _, value in qt.ODD_VISIBILITY:
        assert avail.count(value) == 1
    assert names.count('Pedestrian Group') == 2 and names.count('Bicycle Group') == 1
    for _, _, _, deg in qt.ODD_YAW:        # kept as written: yaw * pi / 180, not wrapped
        assert np.isclose(rots, deg * np.pi / 180, rtol=0, atol=1e-12).sum() == 1
    assert sum(len(i['annos']['name']) == 0 for i in infos) == len(qt.HEADER_ONLY)
    lines = [line for line in err.splitlines() if line]
    assert all(line.startswith('kradar-create-data: note: ') for line in lines), err
    text = '\n'.join(lines)
    # one line per quirk, with its count and first places, the files named '<seq>/<file>:<line>'
    name = dict(((s, k), n) for s, k, n, _, _ in quirky['frames'])
    ll = '{}/{}:{}'.format('11', name[('11', 3)], 10)
    assert '3 objects with visibility outside R/L/L1 [LL: 1, LR: 1, l: 1] (kept as written; --only-r drops ' \
           'them): ' + ll in text
    assert "3 objects of a class outside the benchmark's five" in text and 'Pedestrian Group: 2' in text
    assert '4 objects with yaw outside [-180, 180] degrees' in text
    assert '{} header-only frames'.format(len(qt.HEADER_ONLY)) in text
    assert '{} files without a final newline'.format(len(qt.NO_NEWLINE)) in text
    assert '{} files with trailing spaces'.format(len(qt.TRAILING)) in text

    assert _convert(quirky, tmp_path / 'r', '--label-version', 'v2.1', '--only-r') == 0
    capsys.readouterr()
    kept = [v for s in ('train', 'test') for i in _load(tmp_path / 'r' / 'kradar_infos_{}.pkl'.format(s))
            for v in i['annos']['avail']]
    assert set(kept) == {'R'} and len(kept) == avail.count('R')


def test_v20_glued_headers_are_split_and_counted(quirky, tmp_path, capsys):
    assert _convert(quirky, tmp_path / 'out', '--label-version', 'v2.0') == 0
    err = capsys.readouterr().err
    assert "{} files whose first object shares the header line (split at the second '*'".format(
        len(qt.GLUED)) in err
    v20 = _load(tmp_path / 'out' / 'kradar_infos_train.pkl') + _load(tmp_path / 'out' / 'kradar_infos_test.pkl')
    assert _convert(quirky, tmp_path / 'v21', '--label-version', 'v2.1') == 0
    v21 = _load(tmp_path / 'v21' / 'kradar_infos_train.pkl') + _load(tmp_path / 'v21' / 'kradar_infos_test.pkl')
    for a, b in zip(v20, v21):      # the same objects in both versions, glued or not
        assert a['annos']['location'].tobytes() == b['annos']['location'].tobytes()


def test_strict_turns_each_quirk_into_an_error_and_writes_nothing(quirky, tmp_path, capsys):
    rc = _convert(quirky, tmp_path / 'out', '--label-version', 'v2.1', '--strict')
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ': error: ' in line]
    assert rc == 2 and len(errors) == 1 and err.rstrip().splitlines()[-1] == errors[0]
    assert '--strict: 3 objects with visibility outside R/L/L1' in errors[0] and 'other kind' in errors[0]
    assert not (tmp_path / 'out').exists() or os.listdir(str(tmp_path / 'out')) == []


def test_split_comments_duplicates_overlap_and_glued_lines(quirky, tmp_path, capsys):
    forks = quirky['forks']
    # '#' lines are comments; a frame listed twice is kept once; both are said
    assert _convert(quirky, tmp_path / 'c', split_dir=forks['commented']) == 0
    err = capsys.readouterr().err
    test = [e for i, e in enumerate(quirky['test']) if i % 3]
    assert [i['annos']['label_file'] for i in _load(tmp_path / 'c' / 'kradar_infos_test.pkl')] == test
    assert len(_load(tmp_path / 'c' / 'kradar_infos_train.pkl')) == len(quirky['train'])
    n_comments = len(quirky['test']) - len(test)
    assert "note: {} '#' comment lines in split lists (skipped): test.txt:1, test.txt:4".format(n_comments) in err
    assert 'warning: 1 frames listed twice in one split list' in err and 'train.txt:{} (first on line 1)'.format(
        len(quirky['train']) + 1) in err
    # the same frame in two lists: a warning naming the count and the first lines; an error with --strict
    assert _convert(quirky, tmp_path / 'o', split_dir=forks['overlap']) == 0
    err = capsys.readouterr().err
    first = quirky['test'][0]
    assert 'warning: 4 frames listed in two split lists' in err
    assert '{} (test.txt:1, train.txt:{})'.format(first, len(quirky['train']) + 1) in err
    assert _convert(quirky, tmp_path / 'o2', '--strict', split_dir=forks['overlap']) == 2
    err = capsys.readouterr().err
    assert 'error: --strict: ' in err.splitlines()[-1] and 'warning: 4 frames listed in two split lists' in err
    assert not os.path.exists(str(tmp_path / 'o2' / 'kradar_infos_test.pkl'))
    # a list appended to one without a final newline: one error naming the line and what happened
    assert _convert(quirky, tmp_path / 'a', split_dir=forks['appended']) == 2
    err = capsys.readouterr().err
    line = len(quirky['train'])
    assert err.count('\n') == 1 and 'train.txt:{}: field entry = {!r}'.format(
        line, quirky['train'][-1] + quirky['test'][0]) in err
    assert 'appended to one that had no final newline' in err
    # condition splits and a one-sequence list convert as they are
    assert _convert(quirky, tmp_path / 'k', split_dir=forks['conditions']) == 0
    capsys.readouterr()
    assert set(i['sequence'] for i in _load(tmp_path / 'k' / 'kradar_infos_test_10.pkl')) == {'10'}


def test_read_split_keeps_k_radar_order_and_reads_every_real_form(quirky):
    entries = read_split(os.path.join(quirky['split_dir'], 'train.txt'))
    assert [e.line for e in entries] == quirky['train'] and [e.number for e in entries][:2] == [1, 2]
    with pytest.raises(KRadarFileError, match='glued'):
        read_split(os.path.join(quirky['forks']['appended'], 'train.txt'))


def _tree_listing(root):
    return sorted((d, tuple(sorted(f))) for d, _, f in os.walk(root))


def test_audit_reports_every_quirk_and_writes_nothing(quirky, capsys):
    before = _tree_listing(os.path.dirname(quirky['root']))
    rc = create_data.main(['--audit', '--root-path', quirky['root'], '--split-dir', quirky['split_dir'],
                           '--labels-dir', quirky['labels_dir'], '--no-progress', '--json'])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report['blocking'] == [] and _tree_listing(os.path.dirname(quirky['root'])) == before
    versions = dict((v['version'], v) for v in report['versions'])
    assert sorted(versions) == ['v1.0', 'v2.0', 'v2.1']
    v21 = versions['v2.1']
    assert v21['frames'] == len(quirky['frames']) and v21['empty_frames'] == len(qt.HEADER_ONLY)
    assert v21['classes']['Pedestrian Group'] == 2 and v21['classes']['Bicycle Group'] == 1
    assert all(v21['visibility'][v] == 1 for v in ('LL', 'LR', 'l'))
    assert v21['yaw_deg'] == [-329.9, 457.4]
    assert v21['quirks']['visibility']['count'] == 3 and v21['quirks']['yaw']['count'] == len(qt.ODD_YAW)
    assert versions['v2.0']['quirks']['glued_header']['count'] == len(qt.GLUED)
    assert versions['v1.0']['quirks']['split_err']['count'] == 1 and versions['v1.0']['quirks']['crlf']['count']
    assert v21['split_files_missing']['count'] == 0 and v21['unlisted_label_files']['count'] == 0
    # the text table
    rc = create_data.main(['--audit', '--root-path', quirky['root'], '--split-dir', quirky['split_dir'],
                           '--labels-dir', quirky['labels_dir'], '--no-progress', '--label-version', 'v2.1'])
    out = capsys.readouterr().out
    assert rc == 0 and 'labels v2.1' in out and 'Pedestrian Group' in out and 'nothing blocks conversion' in out
    assert 'yaw: -329.9 to 457.4 degrees' in out and 'labels v1.0' not in out


def test_audit_exits_2_on_what_blocks_conversion(quirky, tmp_path, capsys):
    split = tmp_path / 'split'
    split.mkdir()
    (split / 'test.txt').write_text('\n'.join(quirky['test'] + ['10,99999_99966.txt']))
    (split / 'train.txt').write_text('\n'.join(quirky['train'] + quirky['test'][:2]))
    rc = create_data.main(['--audit', '--root-path', quirky['root'], '--split-dir', str(split), '--labels-dir',
                           quirky['labels_dir'], '--no-progress', '--json', '--label-version', 'v2.0'])
    report = json.loads(capsys.readouterr().out)
    (v20,) = report['versions']
    assert rc == 2 and v20['split_files_missing']['count'] == 1 and not v20['converts']
    assert v20['split_files_missing']['first'] == ['test.txt:{} 10,99999_99966.txt'.format(len(quirky['test']) + 1)]
    assert report['overlap']['frames'] == 2 and report['overlap']['first'] == quirky['test'][:2]
    assert any('have no label file' in b for b in report['blocking'])


def test_newcomer_errors_name_the_fix(quirky, tmp_path, capsys):
    root = quirky['root']
    # --label-version v2.0 without --labels-dir: the error says where the labels were looked for and the flag
    rc = create_data.main(['--root-path', root, '--out-dir', str(tmp_path / 'o'), '--split-dir',
                           quirky['split_dir'], '--label-version', 'v2.0', '--no-progress'])
    err = capsys.readouterr().err
    assert rc == 2 and '--labels-dir' in err and err.count('\n') == 1
    # a .zip given as --labels-dir
    zipped = tmp_path / 'kradar_revised_label_v2_0.zip'
    zipped.write_bytes(b'PK\x03\x04')
    rc = create_data.main(['--root-path', root, '--out-dir', str(tmp_path / 'o'), '--split-dir',
                           quirky['split_dir'], '--label-version', 'v2.0', '--labels-dir', str(zipped)])
    assert rc == 2 and 'unzip it' in capsys.readouterr().err
    # bad option values name the option, not a function of ours
    for flag, value in (('--label-version', '2'), ('--sequences', 'abc')):
        with pytest.raises(SystemExit):
            create_data.main(['--root-path', root, '--out-dir', str(tmp_path / 'o'), '--split-dir',
                              quirky['split_dir'], flag, value])
        err = capsys.readouterr().err
        assert 'argument {}'.format(flag) in err and 'normalize_version' not in err and 'parse_sequences' not in err
    # an --out-dir that is a file
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    rc = create_data.main(['--root-path', root, '--out-dir', str(blocker), '--split-dir', quirky['split_dir'],
                           '--no-progress'])
    err = capsys.readouterr().err
    assert rc == 2 and 'Errno' not in err and '--out-dir exists and is not a folder' in err


REAL = os.environ.get('KRADAR_REAL_LABELS')


def _real_label_folders(base):
    """(version, {seq: folder}) of each label version found under ``base``: a dataset root (v1.0 in
    ``<seq>/info_label``) or an unzipped revised-label folder (either level)."""
    out = []
    seqs = [n for n in os.listdir(base) if n.isdigit() and os.path.isdir(os.path.join(base, n, 'info_label'))]
    if seqs:
        out.append(('v1.0', dict((s, os.path.join(base, s, 'info_label')) for s in seqs)))
    for version, (archive, inner, pattern) in sorted(REVISED.items()):
        for cand in (os.path.join(base, archive, inner or ''), os.path.join(base, inner or archive), base):
            if not os.path.isdir(cand) or (seqs and os.path.samefile(cand, base)):
                continue      # a dataset root's sequence folders are not a revised-label folder
            found = dict((str(int(n.split('_')[0])), os.path.join(cand, n)) for n in os.listdir(cand)
                         if os.path.isdir(os.path.join(cand, n)) and n.split('_')[0].isdigit()
                         and n == pattern.format(n.split('_')[0]))
            if found:
                out.append((version, found))
                break
    return out


@need_kradar
@pytest.mark.skipif(not REAL, reason='KRADAR_REAL_LABELS names no folder of real K-Radar labels')
def test_real_labels_equal_kradar_loader_frame_by_frame():
    """Every real label file read here equals K-Radar's own loader (objects, header indices, visibility)."""
    folders = _real_label_folders(REAL)
    assert folders, 'no label folder under {}'.format(REAL)
    for version, seqs in folders:
        key = version.replace('.', '_')
        loader = snap.kradar_loader(key)
        loader.label.calib = loader.item.calib = False       # the label files alone: no calibration needed
        zero = type('Calib', (), {'x': 0.0, 'y': 0.0})()
        n = 0
        for seq, folder in sorted(seqs.items(), key=lambda kv: int(kv[0])):
            for name in sorted(os.listdir(folder)):
                if not name.endswith('.txt'):
                    continue
                path = os.path.join(folder, name)
                try:
                    theirs = loader.get_label(snap.kradar_item(REAL, seq, {key: path}))['meta']
                except Exception:      # K-Radar's loader cannot read it: neither may we, as one error
                    with pytest.raises(KRadarFileError):
                        read_label(path, version)
                    continue
                label = read_label(path, version)
                mine = kradar_objects(label, zero, z_offset=0.0)
                assert [(o[0], o[2], o[3]) for o in mine] == [(o[0], o[2], o[3]) for o in theirs['label']], path
                for a, b in zip(mine, theirs['label']):
                    assert a[1][:3] + a[1][4:] == b[1][:3] + b[1][4:] and _same_modulo_2pi(a[1][3], b[1][3]), path
                assert label.indices['rdr'] == theirs['idx']['rdr'], path
                n += 1
        assert n > 0, (version, REAL)


def test_relabelling_to_v21_reads_the_real_quirks_and_says_them_once(quirky, tmp_path):
    """Relabelling v1.0 infos with the v2.1 labels (``--label-version v2.1``) keeps every odd value as the
    converter does, and one warning summarises what the labels held."""
    import warnings
    from kradar_plugin.files.relabel import LabelQuirks, relabel_infos
    assert _convert(quirky, tmp_path / 'v10') == 0 and _convert(quirky, tmp_path / 'v21', '--label-version', 'v2.1') == 0
    v10 = _load(tmp_path / 'v10' / 'kradar_infos_test.pkl')
    tree = KRadarTree(quirky['root'], 'v2.1', quirky['labels_dir'])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        relabelled = relabel_infos(v10, tree)
    (summary,) = [w for w in caught if issubclass(w.category, LabelQuirks)]
    text = str(summary.message)
    assert 'v2.1 labels of --infos' in text and 'objects with visibility outside R/L/L1' in text
    converted = _load(tmp_path / 'v21' / 'kradar_infos_test.pkl')
    for a, b in zip(relabelled, converted):
        for key in ('name', 'avail', 'location', 'dimensions', 'rotation_y'):
            assert a['annos'][key].tobytes() == b['annos'][key].tobytes() and a['annos'][key].dtype == b['annos'][key].dtype


def test_summary_lines_stay_short_whatever_the_files_hold():
    """Files others hand over may hold any number of odd class names, of any length: the summary line shows
    the most frequent few, cut short, and counts the rest; the header's timestamp is read in linear time."""
    from kradar_plugin.files.labels import parse_label
    from kradar_plugin.files.quirks import Quirks
    quirks = Quirks()
    quirks.add_file('1/00033_00001.txt', [('class', n + 2, 'N{}'.format(n) * 1000) for n in range(5000)])
    line = quirks.line('class')
    assert line.startswith('5000 objects of a class outside') and len(line) < 1000 and 'more values: ' in line
    spaced = parse_label(['* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)=00033_00001_00035_00002_00034, '
                          'timestamp=1' + ' ' * 1000000 + 'x'], 'v2.1')
    assert spaced.timestamp == '1' + ' ' * 1000000 + 'x' and spaced.objects == []
