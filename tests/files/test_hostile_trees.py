"""Hostile and broken dataset trees and prediction folders (issue 28, part 5), through the real CLIs.

Each bad input must end with exit 2 and one ``<prog>: error:`` line naming the file (and line), within a
bounded time (the child is killed after ``TIMEOUT`` s: a hang fails the test) and memory (the child runs under
``RLIMIT_AS``), and nothing may be written into the dataset tree. The trees are built here: FIFOs, links to
``/dev/zero`` and to files outside the root, huge comma files, 5,000-digit numbers, a planted ``.tmp`` link.
Valid but large inputs (a 100,000-object label file, a 1,000,000-line ``val.txt``, 50,000 sequence folders)
must still be read.
"""
import hashlib
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.files import safe_write
from kradar_plugin.files.errors import QUOTE_LIMIT, KRadarFileError, checked_int, quote
from kradar_plugin.files.kitti_folders import MAX_OBJECTS, MAX_PAIRS, read_folder, read_ids
from kradar_plugin.files.relabel import label_file_parts
from kradar_plugin.files.text import LIMITS, read_text

from . import _kitti_writer as writer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 60            # seconds a child may run: a hang fails the test
MEMORY_MB = 1536        # address space of a child (numpy and the CLI need about 500 MB of it)
LONG_LINE = 600         # an error line longer than this quotes too much
unix_only = pytest.mark.skipif(not hasattr(os, 'mkfifo'), reason='FIFOs and links need a POSIX system')


def _cap(mb):
    def set_limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
    return set_limit


def _run(entry, args, memory_mb=MEMORY_MB):
    """``kradar_cli.<entry>(args)`` in a child under a memory cap; a child running past TIMEOUT fails."""
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    env.pop('KRADAR_PLUGIN_REGISTER', None)
    code = 'import sys, kradar_cli; sys.exit(kradar_cli.{}(sys.argv[1:]))'.format(entry)
    return subprocess.run([sys.executable, '-c', code] + list(args), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=TIMEOUT,
                          preexec_fn=_cap(memory_mb))


def _one_error(proc, prog, *shown):
    """Exit 2, one ``prog: error:`` line (short) holding each of ``shown``; no traceback. Returns the line."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(prog + ': error: ')]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert 'Traceback' not in proc.stderr and 'MemoryError' not in proc.stderr, proc.stderr[-3000:]
    assert len(errors) == 1 and errors[0] == lines[-1], proc.stderr[-3000:]
    for text in shown:
        assert text in errors[0], (text, errors[0])
    assert len(errors[0]) < LONG_LINE, errors[0][:2000]
    return errors[0]


def _state(root):
    """{path: (kind, size, sha1)} of everything under ``root`` (links not followed)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                out[path] = ('link', os.readlink(path), None)
            elif os.path.isfile(path):
                with open(path, 'rb') as f:
                    out[path] = ('file', os.path.getsize(path), hashlib.sha1(f.read()).hexdigest())
            elif os.path.isdir(path):
                out[path] = ('dir', None, None)
            else:
                out[path] = ('other', None, None)
    return out


# ---------------------------------------------------------------------------------------------- dataset trees

@pytest.fixture(scope='module')
def small_tree(tmp_path_factory):
    from kradar_plugin.demo import tree as dt
    return dt.generate_tree(str(tmp_path_factory.mktemp('small_tree')), frames=4, train_frames=4)


@pytest.fixture
def tree(small_tree, tmp_path):
    """A fresh copy of the small demo tree: {'root', 'split_dir', 'labels_dir', 'out', 'label', 'entry'}
    (``label``: the v1.0 label file of the first test entry)."""
    root = str(tmp_path / 'tree')
    shutil.copytree(small_tree['root'], root, symlinks=True)
    split_dir = os.path.join(root, 'split')
    with open(os.path.join(split_dir, 'test.txt')) as f:
        entry = f.read().split()[0]
    seq, name = entry.split(',')
    return {'root': root, 'split_dir': split_dir, 'labels_dir': os.path.join(root, 'revised_labels'),
            'out': str(tmp_path / 'out'), 'entry': entry, 'label': os.path.join(root, seq, 'info_label', name),
            'seq_dir': os.path.join(root, seq)}


def _convert(tree, *extra):
    args = ['--root-path', tree['root'], '--out-dir', tree['out'], '--split-dir', tree['split_dir'],
            '--no-progress'] + list(extra)
    before = _state(tree['root'])
    proc = _run('create_data_main', args)
    assert _state(tree['root']) == before, 'the dataset tree changed'
    return proc


def _replace(path, make):
    os.remove(path)
    make(path)


def test_the_small_tree_converts(tree):
    proc = _convert(tree)
    assert proc.returncode == 0, proc.stderr[-2000:]


@unix_only
def test_label_file_fifo_is_refused_not_waited_on(tree):
    _replace(tree['label'], os.mkfifo)
    _one_error(_convert(tree), 'kradar-create-data', tree['label'], 'FIFO')


@unix_only
def test_label_file_linked_to_dev_zero_is_refused(tree):
    _replace(tree['label'], lambda p: os.symlink('/dev/zero', p))
    _one_error(_convert(tree), 'kradar-create-data', tree['label'], 'character device')


@unix_only
def test_label_file_linked_outside_the_root_is_read(tree, tmp_path):
    """Dataset trees link folders and files from other disks: a link to a regular file is followed."""
    outside = str(tmp_path / 'other_disk.txt')
    shutil.copy(tree['label'], outside)
    _replace(tree['label'], lambda p: os.symlink(outside, p))
    proc = _convert(tree)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_label_file_of_60_mb_of_commas(tree):
    with open(tree['label'], 'w') as f:
        f.write(',' * (60 << 20))
    _one_error(_convert(tree), 'kradar-create-data', tree['label'], 'label file')


def test_label_file_of_commas_under_the_size_limit(tree):
    """A line of millions of fields under the size limit: refused by a field limit, not split into millions
    of strings (the child's memory cap)."""
    with open(tree['label'], 'w') as f:
        f.write('* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)=00040_00008_00008_00008_00008, timestamp=1\n')
        f.write('*, 1, 1, Sedan' + ',' * (LIMITS['label file'] - 200) + '\n')
    proc = _convert(tree)
    if proc.returncode == 0:       # a line of another field count: skipped as K-Radar's loader skips it, and said
        rel = tree['entry'].replace(',', '/')
        assert 'Traceback' not in proc.stderr and any(
            rel in line and 'field count' in line for line in proc.stderr.splitlines()), proc.stderr[-3000:]
    else:
        _one_error(proc, 'kradar-create-data', tree['label'])


def test_label_id_of_5000_digits(tree):
    with open(tree['label']) as f:
        lines = f.read().splitlines()
    objects = [n for n, line in enumerate(lines) if line.startswith('*,')]
    assert objects, lines
    parts = lines[objects[0]].split(',')
    parts[1] = ' ' + '9' * 5000
    lines[objects[0]] = ','.join(parts)
    with open(tree['label'], 'w') as f:
        f.write('\n'.join(lines) + '\n')
    line = _one_error(_convert(tree), 'kradar-create-data', '{}:{}'.format(tree['label'], objects[0] + 1))
    assert 'id' in line and '5,00' in line      # the value quoted short, its length said


def test_split_list_of_52_mb(tree):
    path = os.path.join(tree['split_dir'], 'test.txt')
    with open(path, 'a') as f:
        f.write(('\n' + tree['entry']) * 1 + '\n' + 'x' * (52 << 20))
    _one_error(_convert(tree), 'kradar-create-data', path)


def test_split_list_of_blank_lines_under_the_size_limit(tree):
    """Millions of lines under the split size limit: read in bounded memory (the child's cap), and the
    frames it names converted."""
    path = os.path.join(tree['split_dir'], 'test.txt')
    with open(path, 'a') as f:
        f.write('\n' * (LIMITS['split file'] - 1000))
    proc = _convert(tree)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_split_sequence_of_5000_digits(tree):
    path = os.path.join(tree['split_dir'], 'test.txt')
    with open(path, 'a') as f:
        f.write('\n' + '1' * 5000 + ',00040_00008.txt\n')
    _one_error(_convert(tree), 'kradar-create-data', path + ':')


@unix_only
def test_split_list_fifo_is_refused_not_skipped(tree):
    path = os.path.join(tree['split_dir'], 'val.txt')
    os.mkfifo(path)
    _one_error(_convert(tree), 'kradar-create-data', path, 'FIFO')


@unix_only
def test_split_list_linked_to_dev_zero_is_refused_not_skipped(tree):
    path = os.path.join(tree['split_dir'], 'val.txt')
    os.symlink('/dev/zero', path)
    _one_error(_convert(tree), 'kradar-create-data', path, 'character device')


@unix_only
def test_calibration_fifo(tree):
    calib = os.path.join(tree['seq_dir'], 'info_calib', 'calib_radar_lidar.txt')
    _replace(calib, os.mkfifo)
    _one_error(_convert(tree), 'kradar-create-data', calib, 'FIFO')


@unix_only
def test_description_fifo(tree):
    desc = os.path.join(tree['seq_dir'], 'description.txt')
    _replace(desc, os.mkfifo)
    _one_error(_convert(tree), 'kradar-create-data', desc, 'FIFO')


def test_description_of_10_mb_of_commas_is_one_short_line(tree):
    desc = os.path.join(tree['seq_dir'], 'description.txt')
    with open(desc, 'w') as f:
        f.write(',' * (10 << 20))
    _one_error(_convert(tree), 'kradar-create-data', desc)


def test_description_of_commas_under_the_size_limit_is_quoted_short(tree):
    desc = os.path.join(tree['seq_dir'], 'description.txt')
    with open(desc, 'w') as f:
        f.write('urban' + ',' * (LIMITS['description file'] - 100))
    line = _one_error(_convert(tree), 'kradar-create-data', desc)
    assert 'characters)' in line


def test_calibration_value_of_5000_digits(tree):
    calib = os.path.join(tree['seq_dir'], 'info_calib', 'calib_radar_lidar.txt')
    with open(calib, 'w') as f:
        f.write('frame difference,x,y\n' + '9' * 5000 + ',1.0,2.0\n')
    _one_error(_convert(tree), 'kradar-create-data', calib)


@unix_only
def test_planted_tmp_link_never_writes_into_the_dataset(tree):
    """``<out>.tmp`` (the converter's old temporary name) and the output's own name planted as links to a
    label file: the label file is untouched (``_convert`` compares the whole tree) and the outputs are
    regular pickles."""
    os.makedirs(tree['out'])
    out = os.path.join(tree['out'], 'kradar_infos_test.pkl')
    os.symlink(tree['label'], out + '.tmp')
    os.symlink(tree['label'], os.path.join(tree['out'], 'kradar_infos_train.pkl'))
    proc = _convert(tree)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ('kradar_infos_test.pkl', 'kradar_infos_train.pkl'):
        path = os.path.join(tree['out'], name)
        assert os.path.isfile(path) and not os.path.islink(path)
        with open(path, 'rb') as f:
            assert isinstance(pickle.load(f), list)
    assert [n for n in os.listdir(tree['out']) if n.endswith('.tmp') and not os.path.islink(
        os.path.join(tree['out'], n))] == []


def test_out_dir_that_is_a_file(tree, tmp_path):
    path = str(tmp_path / 'a_file')
    with open(path, 'w') as f:
        f.write('x')
    tree = dict(tree, out=path)
    _one_error(_convert(tree), 'kradar-create-data', path)


# ----------------------------------------------------------------------------------- relabelling by label_file

@pytest.fixture
def relabel_run(small_tree, tmp_path):
    """(infos path, results path, write(infos)) of the small tree's converted test split."""
    from kradar_plugin.files.create_data import main
    out = str(tmp_path / 'infos')
    assert main(['--root-path', small_tree['root'], '--out-dir', out, '--split-dir', small_tree['split_dir'],
                 '--no-progress']) == 0
    infos_path = os.path.join(out, 'kradar_infos_test.pkl')
    with open(infos_path, 'rb') as f:
        infos = pickle.load(f)
    results = [{'boxes_3d': np.array([[10.0, 0, 0, 4, 2, 1.5, 0]], dtype=np.float32),
                'scores_3d': np.array([0.9], dtype=np.float32), 'labels_3d': np.zeros(1, dtype=np.int64)}
               for _ in infos]
    results_path = str(tmp_path / 'results.pkl')
    with open(results_path, 'wb') as f:
        pickle.dump(results, f)

    def write(label_file, index=1):
        infos[index]['annos']['label_file'] = label_file
        path = str(tmp_path / 'hostile_infos.pkl')
        with open(path, 'wb') as f:
            pickle.dump(infos, f)
        return path
    return write, results_path, small_tree['root']


@pytest.mark.parametrize('label_file', ['1,../../../../../../../../etc/passwd', '1,../../secret.txt',
                                        '1,..\\..\\secret.txt', '1,/etc/hostname.txt', '1' * 5000 + ',x.txt',
                                        '1,' + 'a' * 100000 + '.txt', '1,sub/00040_00008.txt', '1,..txt',
                                        '1,00040_00008.txt\x00.txt'])
def test_label_file_of_infos_keeps_to_the_label_folder(relabel_run, tmp_path, label_file):
    write, results, root = relabel_run
    with open(str(tmp_path / 'secret.txt'), 'w') as f:
        f.write('* idx SECRET-CONTENT\n')
    proc = _run('eval_main', ['--infos', write(label_file), '--results', results, '--kradar-root', root,
                              '--no-progress'])
    line = _one_error(proc, 'kradar-eval', 'frame 1', "annos['label_file']")
    assert 'SECRET' not in proc.stderr + proc.stdout and 'root:' not in proc.stderr
    assert quote(label_file) in line


# ------------------------------------------------------------------------------------------ prediction folders

@pytest.fixture
def kitti(tmp_path):
    """A fresh K-Radar ``validate_kitti`` folder of 12 frames; {'base', 'ids', 'pred', 'gt', 'desc', 'val'}."""
    base = writer.write_folders(str(tmp_path / 'kitti'), writer.random_frames(12, seed=5))
    with open(os.path.join(base, 'val.txt')) as f:
        ids = [int(v) for v in f.read().split()]
    return {'base': base, 'ids': ids, 'val': os.path.join(base, 'val.txt'),
            'pred': os.path.join(base, 'pred'), 'gt': os.path.join(base, 'gt'), 'desc': os.path.join(base, 'desc')}


def _evaluate(kitti, *extra):
    before = _state(kitti['base'])
    proc = _run('eval_main', ['--kitti-dir', kitti['base'], '--no-progress'] + list(extra))
    assert _state(kitti['base']) == before, 'the prediction folder changed'
    return proc


def _frame(kitti, side, k=1):
    return os.path.join(kitti[side], '{:06d}.txt'.format(kitti['ids'][k]))


def test_the_prediction_folder_evaluates(kitti):
    proc = _evaluate(kitti)
    assert proc.returncode == 0, proc.stderr[-2000:]


@unix_only
@pytest.mark.parametrize('side', ['gt', 'pred', 'desc'])
def test_frame_file_fifo_is_refused_by_name(kitti, side):
    path = _frame(kitti, side)
    _replace(path, os.mkfifo)
    _one_error(_evaluate(kitti), 'kradar-eval', kitti[side], os.path.basename(path))


@unix_only
@pytest.mark.parametrize('make', ['fifo', 'dev_zero'])
def test_val_txt_fifo_or_dev_zero_is_an_error_not_dropped(kitti, make):
    _replace(kitti['val'], os.mkfifo if make == 'fifo' else lambda p: os.symlink('/dev/zero', p))
    _one_error(_evaluate(kitti), 'kradar-eval', kitti['val'], 'FIFO' if make == 'fifo' else 'character device')


@unix_only
def test_frame_file_linked_to_dev_zero_is_refused_by_name(kitti):
    path = _frame(kitti, 'gt')
    _replace(path, lambda p: os.symlink('/dev/zero', p))
    _one_error(_evaluate(kitti), 'kradar-eval', kitti['gt'], os.path.basename(path))


@pytest.mark.parametrize('side,name', [('pred', 'notes.md'), ('gt', '1.txt'), ('desc', '.DS_Store'),
                                       ('gt', 'a_folder')])
def test_odd_entries_are_listed_and_refused(kitti, side, name):
    path = os.path.join(kitti[side], name)
    if name == 'a_folder':
        os.mkdir(path)
    else:
        with open(path, 'w') as f:
            f.write(writer.DUMMY + '\n')
    _one_error(_evaluate(kitti), 'kradar-eval', kitti[side], repr(name))


def test_gt_file_not_in_val_txt_is_refused(kitti):
    with open(kitti['val'], 'w') as f:
        f.write(''.join('{:06d}\n'.format(i) for i in kitti['ids'][1:]))
    os.remove(_frame(kitti, 'pred', 0))
    _one_error(_evaluate(kitti), 'kradar-eval', _frame(kitti, 'gt', 0), 'val.txt')


def test_val_txt_id_of_5000_digits(kitti):
    with open(kitti['val'], 'a') as f:
        f.write('9' * 5000 + '\n')
    _one_error(_evaluate(kitti), 'kradar-eval', '{}:{}'.format(kitti['val'], len(kitti['ids']) + 1), 'id')


def test_negative_size_names_the_file_and_line_not_gt_annos(kitti):
    path = _frame(kitti, 'gt')
    with open(path) as f:
        lines = f.read().splitlines()
    parts = lines[-1].split()
    parts[9] = '-1.5'          # w
    lines[-1] = ' '.join(parts)
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    line = _one_error(_evaluate(kitti), 'kradar-eval', '{}:{}'.format(path, len(lines)), 'field w')
    assert 'gt_annos' not in line


def test_huge_class_keyword_is_quoted_short(kitti):
    path = _frame(kitti, 'pred')
    with open(path, 'a') as f:
        f.write('s' * 1000000 + ' -1 -1 0 50 50 150 150 1.5 1.8 4.2 1 0.5 20 0.1 0.9\n')
    _one_error(_evaluate(kitti), 'kradar-eval', path, 'field name')


def test_line_of_a_million_fields(kitti):
    path = _frame(kitti, 'gt')
    with open(path, 'a') as f:
        f.write('sed' + ' 1' * 1000000 + '\n')
    _one_error(_evaluate(kitti), 'kradar-eval', path + ':')


def _objects_folder(kitti, frames, n_objects):
    """Replace the folder's frames by ``frames`` frames of ``n_objects`` GT and as many predictions."""
    rs = np.random.RandomState(0)
    for side in ('gt', 'pred', 'desc'):
        shutil.rmtree(kitti[side])
        os.mkdir(kitti[side])
    ids = list(range(frames))
    for i in ids:
        name = '{:06d}.txt'.format(i)
        xs, ys = rs.uniform(5, 70, n_objects), rs.uniform(-6, 6, n_objects)
        with open(os.path.join(kitti['gt'], name), 'w') as f:
            f.write(''.join('sed 0.00 0 0 50 50 150 150 1.6 1.9 4.5 {:.2f} 0.5 {:.2f} 0.1\n'.format(y, x)
                            for x, y in zip(xs, ys)))
        with open(os.path.join(kitti['pred'], name), 'w') as f:
            f.write(''.join('sed -1 -1 0 50 50 150 150 1.6 1.9 4.5 {:.2f} 0.5 {:.2f} 0.1 0.5\n'.format(y, x)
                            for x, y in zip(xs, ys)))
        with open(os.path.join(kitti['desc'], name), 'w') as f:
            f.write('day\nurban\nnormal')
    with open(kitti['val'], 'w') as f:
        f.write(''.join('{:06d}\n'.format(i) for i in ids))
    return dict(kitti, ids=ids)


def test_ten_thousand_objects_per_frame_in_bounded_memory(kitti):
    """The issue's 4 MB folder (10,000 objects per frame) grew to 23 GB: now an error naming the file."""
    kitti = _objects_folder(kitti, 3, 10000)
    line = _one_error(_evaluate(kitti), 'kradar-eval', _frame(kitti, 'gt', 0) + ':{}'.format(MAX_OBJECTS + 1))
    assert 'objects' in line


def test_pairs_of_all_frames_are_bounded(kitti):
    per_frame = MAX_OBJECTS - 1
    frames = MAX_PAIRS // per_frame ** 2 + 1
    kitti = _objects_folder(kitti, frames, per_frame)
    line = _one_error(_evaluate(kitti), 'kradar-eval', _frame(kitti, 'pred', frames - 1), 'pairs')
    assert 'frame {}'.format(frames - 1) in line


def test_reading_a_folder_reports_progress(kitti, capsys, monkeypatch):
    """The CLI shows a bar while it reads a folder of more frames than its threshold (lowered here), none with
    --no-progress; the bar counts every frame."""
    from kradar_plugin import progress
    from kradar_plugin.evaluation.cli import main
    monkeypatch.setattr(progress, 'MIN_FRAMES', 1)
    assert main(['--kitti-dir', kitti['base'], '--protocol', 'kradar']) == 0
    err = capsys.readouterr().err
    assert 'reading {}'.format(os.path.basename(kitti['base'])) in err and '{}/{}'.format(
        len(kitti['ids']), len(kitti['ids'])) in err
    assert main(['--kitti-dir', kitti['base'], '--protocol', 'kradar', '--no-progress']) == 0
    assert 'reading' not in capsys.readouterr().err
    counted = []

    class Bar(object):
        def start(self, total, label):
            counted.append(total)

        def update(self, n=1):
            counted.append(n)

        def close(self):
            counted.append('closed')
    read_folder(kitti['base'], progress=lambda n: Bar())
    assert counted[0] == len(kitti['ids']) and sum(counted[1:-1]) == len(kitti['ids']) and counted[-1] == 'closed'


# ------------------------------------------------------------------------------------- valid but large inputs

def test_val_txt_of_a_million_lines(tmp_path):
    path = str(tmp_path / 'val.txt')
    with open(path, 'w') as f:
        f.write(''.join('{:06d}\n'.format(i) for i in range(1000000)))
    ids = read_ids(path)
    assert len(ids) == 1000000 and ids[:3] == [0, 1, 2] and ids[-1] == 999999


def test_label_file_of_100000_objects(tmp_path):
    from kradar_plugin.files.labels import read_label
    path = str(tmp_path / '00040_00008.txt')
    with open(path, 'w') as f:
        f.write('* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)=00040_00008_00008_00008_00008, timestamp=1\n')
        f.write(''.join('*, {}, {}, Sedan, {:.2f}, 1.5, 0.3, 12.5, 2.1, 0.9, 0.8\n'.format(k, k, k % 70 + 0.5)
                        for k in range(100000)))
    assert os.path.getsize(path) < LIMITS['label file']
    label = read_label(path, 'v1.0')
    assert len(label.objects) == 100000


def test_fifty_thousand_sequence_folders(tmp_path):
    from kradar_plugin.files.tree import KRadarTree
    root = tmp_path / 'many'
    root.mkdir()
    for k in range(1, 50001):
        os.mkdir(str(root / str(k)))
    assert len(KRadarTree(str(root)).sequences) == 50000


# -------------------------------------------------------------------------------------------- the helpers

@unix_only
def test_read_text_names_what_it_refuses(tmp_path):
    import socket
    fifo = str(tmp_path / 'fifo')
    os.mkfifo(fifo)
    sock_path = str(tmp_path / 's')
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(sock_path)
        for path, kind in ((fifo, 'a FIFO'), ('/dev/zero', 'a character device'), (str(tmp_path), 'a directory'),
                           (sock_path, 'a socket')):
            with pytest.raises(KRadarFileError) as err:
                read_text(path, 'split file')
            assert str(err.value) == '{}: split file is {}, not a regular file: refused (only regular files are ' \
                                     'read)'.format(path, kind + (' (named pipe)' if kind == 'a FIFO' else ''))
    finally:
        sock.close()


def test_read_text_limits_by_kind(tmp_path):
    path = str(tmp_path / 'calib.txt')
    with open(path, 'w') as f:
        f.write('x' * (LIMITS['calibration file'] + 1))
    with pytest.raises(KRadarFileError, match='calibration file larger than'):
        read_text(path, 'calibration file')
    assert len(read_text(path, 'label file')) == LIMITS['calibration file'] + 1
    assert len(read_text(path, 'calibration file', limit=1 << 20)) == LIMITS['calibration file'] + 1
    with pytest.raises(KRadarFileError, match='larger than 10 bytes'):
        read_text(path, 'anything', limit=10)


def test_quote_and_checked_int():
    assert quote('abc') == "'abc'"
    long = 'x' * 10 ** 6
    assert quote(long) == repr('x' * QUOTE_LIMIT) + '... (1,000,000 characters)'
    err = KRadarFileError('f.txt', 'expected a number', line=3, field='x', value=long)
    assert str(err).startswith("f.txt:3: field x = 'xxx") and len(str(err)) < 2 * QUOTE_LIMIT + 60
    assert checked_int(' 42 ', 'f.txt', 1, 'id') == 42 and checked_int('-7', 'f.txt', 1, 'id') == -7
    with pytest.raises(KRadarFileError) as e:
        checked_int('9' * 5000, 'f.txt', 7, 'id')
    assert str(e.value).startswith("f.txt:7: field id = '999") and 'at most 18 digits' in str(e.value)
    with pytest.raises(KRadarFileError, match="f.txt:2: field id = 'R' expected an integer"):
        checked_int('R', 'f.txt', 2, 'id')


def test_label_file_rule():
    assert label_file_parts('07,00040_00008.txt', 0) == ('7', '00040_00008.txt')
    assert label_file_parts(' 1 , 00040_00008.txt ', 0) == ('1', '00040_00008.txt')
    for bad in ('1,../x.txt', '1,/abs.txt', '1,a/b.txt', '1,a\\b.txt', 'x,a.txt', '1,a.pkl', '1,.txt', None,
                '1,a.txt,2', '\u0661,a.txt', '1' * 6 + ',a.txt'):
        with pytest.raises(KRadarFileError, match="frame 4 cannot be joined"):
            label_file_parts(bad, 4)


@unix_only
def test_safe_write_replaces_a_planted_link_never_its_target(tmp_path):
    victim = tmp_path / 'victim.txt'
    victim.write_text('keep')
    out = tmp_path / 'out.bin'
    os.symlink(str(victim), str(out))
    assert safe_write.write_bytes(str(out), b'new') == str(out)
    assert victim.read_text() == 'keep' and not os.path.islink(str(out)) and out.read_bytes() == b'new'
    assert sorted(os.listdir(str(tmp_path))) == ['out.bin', 'victim.txt']


def test_safe_write_keeps_the_old_file_when_writing_fails(tmp_path):
    out = tmp_path / 'out.json'
    out.write_text('old')
    with pytest.raises(RuntimeError):
        with safe_write.open_for_write(str(out), 'w') as f:
            f.write('half')
            raise RuntimeError('stop')
    assert out.read_text() == 'old' and sorted(os.listdir(str(tmp_path))) == ['out.json']
    with safe_write.open_for_write(str(out), 'w') as f:
        f.write('new')
    assert out.read_text() == 'new'


def test_safe_write_errors_name_the_file(tmp_path):
    with pytest.raises(KRadarFileError, match='no_such_folder.*cannot write'):
        safe_write.write_bytes(str(tmp_path / 'no_such_folder' / 'x.pkl'), b'x')
    (tmp_path / 'a_folder').mkdir()
    with pytest.raises(KRadarFileError, match='a_folder: cannot write: a folder has this name'):
        safe_write.write_bytes(str(tmp_path / 'a_folder'), b'x')
