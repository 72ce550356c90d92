"""Real checkpoints of every built stack, loaded by ``load_checkpoint`` on this one: each environment's own
``torch.save`` (zip and legacy), mmcv 1.x's runner and mmengine's Runner write a corpus
(``corpus_writer.py``) with a manifest of what that stack's ``torch.load`` reads; here every file must give the
same tensors (dtype, shape, values, strides, Parameter, requires_grad), arrays and plain values.

This stack's corpus is written in the session; the other environments' (EchoFusion's torch 1.10, the 1.x and
2.0 stacks, today's torch 2.13 with numpy 2) are written once by their own interpreter into
``work_dirs/test_cache/checkpoint_corpus/<env>`` (kept while the writer is unchanged), skipped where the
environment is not built.
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch')

from kradar_plugin.loading import load_checkpoint  # noqa: E402

from .corpus_writer import leaves  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRITER = os.path.join(HERE, 'corpus_writer.py')
STACKS = ('.venv', '.venv-echofusion', '.venv-mm2', '.venv-latest')
CACHE = os.path.join(ROOT, 'work_dirs', 'test_cache', 'checkpoint_corpus')


def _writer_hash():
    with open(WRITER, 'rb') as f:
        return hashlib.sha1(f.read()).hexdigest()[:12]


def _write(python, folder):
    tmp = folder + '.tmp{}'.format(os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    out = subprocess.run([python, WRITER, tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=600, cwd=ROOT)
    if out.returncode != 0:
        raise AssertionError('{} {} failed:\n{}'.format(python, WRITER, out.stdout[-3000:]))
    if os.path.isdir(folder):
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.rename(tmp, folder)
    return folder


@pytest.fixture(scope='session')
def own_corpus(tmp_path_factory):
    return _write(sys.executable, str(tmp_path_factory.mktemp('corpus') / 'here'))


def _site_packages(stack):
    import glob
    found = glob.glob(os.path.join(ROOT, stack, 'lib', 'python*', 'site-packages'))
    return sorted(os.listdir(found[0])) if found else []


def _stack_corpus(stack):
    """(corpus folder, installed distributions) of ``stack``, written by its own interpreter unless cached
    for this writer and these distributions."""
    python = os.path.join(ROOT, stack, 'bin', 'python')
    if not os.path.isfile(python):
        pytest.skip('{} is not built'.format(stack))
    installed = _site_packages(stack)
    key = hashlib.sha1((_writer_hash() + '\n'.join(installed)).encode()).hexdigest()[:12]
    folder = os.path.join(CACHE, '{}-{}'.format(stack.lstrip('.'), key))
    if not os.path.isfile(os.path.join(folder, 'manifest.json')):
        os.makedirs(CACHE, exist_ok=True)
        try:
            _write(python, folder)
        except AssertionError as exc:   # e.g. an environment still being built beside this run: its own run fails
            pytest.skip('{} cannot write its corpus now: {}'.format(stack, str(exc)[-500:]))
        _prune(stack, folder)
    return folder, installed


def _prune(stack, keep):
    """The stack's corpora of earlier writers or installations."""
    import re
    pattern = re.compile(r'^{}-[0-9a-f]{{12}}$'.format(re.escape(stack.lstrip('.'))))
    for name in os.listdir(CACHE):
        path = os.path.join(CACHE, name)
        if pattern.match(name) and path != keep:
            shutil.rmtree(path, ignore_errors=True)


def _manifest(folder):
    with open(os.path.join(folder, 'manifest.json')) as f:
        return json.load(f)


def _check_corpus(folder):
    manifest = _manifest(folder)
    assert manifest['files'], folder
    for name, expected in sorted(manifest['files'].items()):
        got = leaves(load_checkpoint(os.path.join(folder, name)))
        assert sorted(got) == sorted(expected), (name, sorted(set(got) ^ set(expected))[:10])
        for path in expected:
            assert got[path] == expected[path], (name, path, got[path], expected[path])
    return manifest


def test_this_stacks_corpus_loads_as_its_torch_load_reads_it(own_corpus):
    manifest = _check_corpus(own_corpus)
    assert 'plain_zip.pth' in manifest['files'] and 'plain_legacy.pth' in manifest['files']


@pytest.mark.parametrize('stack', STACKS)
def test_other_stacks_corpus_loads_here(stack):
    """EchoFusion's torch 1.10 files on torch 2.x, today's torch 2.13 + numpy 2 files on torch 1.10, ..."""
    folder, installed = _stack_corpus(stack)
    manifest = _check_corpus(folder)
    for runner, dist in (('mmcv1_epoch_1.pth', 'mmcv_full-1.'), ('mmengine_epoch_1.pth', 'mmengine-')):
        if any(d.startswith(dist) or d.startswith('onedl_' + dist) for d in installed):
            assert runner in manifest['files'], (stack, sorted(manifest['files']))


def test_tensors_equal_torch_load_and_share_storages(own_corpus):
    path = os.path.join(own_corpus, 'plain_zip.pth')
    ours = load_checkpoint(path)
    ref = torch_load(path)
    for group in ('dtypes', 'views', 'parameters'):
        for key, value in ref[group].items():
            got = ours[group][key]
            assert type(got) is type(value) and got.dtype == value.dtype and got.stride() == value.stride()
            assert torch.equal(got, value) and got.requires_grad == value.requires_grad, (group, key)
    views = ours['views']                           # one storage, as torch.save wrote it
    assert _storage_ptr(views['offset']) == _storage_ptr(views['whole'])
    views['whole'][5] = -1
    assert int(views['offset'][2]) == -1
    assert ours['state_dict']._metadata == ref['state_dict']._metadata
    assert ours['grad_tensor'].requires_grad and ours['meta']['size'] == torch.Size([2, 3])


def torch_load(path):
    """torch's own full unpickling (the reference; these files were written here)."""
    try:
        return torch.load(path, map_location='cpu', weights_only=False)
    except TypeError:                   # torch < 1.13
        return torch.load(path, map_location='cpu')


def _storage_ptr(tensor):
    return (tensor.untyped_storage() if hasattr(tensor, 'untyped_storage') else tensor.storage()).data_ptr()


def test_file_objects_and_map_location(own_corpus):
    path = os.path.join(own_corpus, 'plain_legacy.pth')
    with open(path, 'rb') as f:
        data = f.read()
    from_bytes = load_checkpoint(io.BytesIO(data))
    assert torch.equal(from_bytes['views']['slice'], torch_load(path)['views']['slice'])
    for location in (None, 'cpu', torch.device('cpu'), {'cpu': 'cpu'}, lambda storage, loc: storage):
        loaded = load_checkpoint(path, map_location=location)
        assert loaded['state_dict']['0.weight'].device.type == 'cpu'


def test_without_torch_the_loader_gives_numpy_arrays(own_corpus):
    """In an interpreter where torch cannot be imported, the same files load as numpy arrays."""
    path = os.path.join(own_corpus, 'plain_zip.pth')
    code = ('import sys; sys.modules["torch"] = None\n'
            'from kradar_plugin.loading import load_checkpoint, load_checkpoint_tree\n'
            'ck = load_checkpoint({!r})\n'
            'print(ck["views"]["slice"].tolist(), ck["dtypes"]["int16"].dtype, ck["meta"]["size"])\n'
            'print(load_checkpoint_tree({!r})["views"]["transposed"])'.format(path, path))
    out = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    expected = torch_load(path)['views']['slice'].tolist()
    assert lines[0] == '{} int16 (2, 3)'.format(expected)
    assert lines[1] == 'TensorInfo(shape=(6, 4), dtype=float32)'
