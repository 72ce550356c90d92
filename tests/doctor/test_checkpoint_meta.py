"""Reading a checkpoint's meta without torch: fixtures written by the real torch.save (data/make_checkpoints.py),
in torch's zip and legacy formats, and the doctor's box-convention check on them."""
import os
import pickle
import subprocess
import sys
import zipfile

import pytest

from kradar_plugin.doctor import run_checks
from kradar_plugin.doctor.probes.checkpoint_meta import checkpoint_meta
from kradar_plugin.doctor.cli import main

from .helpers import result

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
MMDET3D_0173 = os.path.join(DATA, 'mmdet3d_0.17.3_zip.pth')
MMDET3D_RC6_LEGACY = os.path.join(DATA, 'mmdet3d_1.0.0rc6_legacy.pth')
MMENGINE = os.path.join(DATA, 'mmengine_0.10.7_zip.pth')
NO_META = os.path.join(DATA, 'no_meta_zip.pth')


def test_zip_checkpoint_meta():
    # make_checkpoints.py: checkpoint_config.meta of mmdet3d 0.17.3's tools/train.py + the runner's mmcv_version.
    info = checkpoint_meta(MMDET3D_0173)
    assert info == {'path': MMDET3D_0173, 'format': 'zip', 'meta': True, 'mmdet3d_version': '0.17.3',
                    'mmdet_version': '2.19.0', 'mmseg_version': '0.20.0', 'mmcv_version': '1.7.0'}


def test_legacy_checkpoint_meta():
    info = checkpoint_meta(MMDET3D_RC6_LEGACY)
    assert info['format'] == 'legacy' and info['mmdet3d_version'] == '1.0.0rc6'


def test_mmengine_checkpoint_meta_without_its_classes():
    info = checkpoint_meta(MMENGINE)
    assert info['mmengine_version'] == '0.10.7' and 'mmdet3d_version' not in info


def test_no_meta_and_foreign_files(tmp_path):
    assert checkpoint_meta(NO_META) == {'path': NO_META, 'format': 'zip', 'meta': False}
    text = tmp_path / 'notes.pth'
    text.write_text('not a checkpoint')
    assert 'error' in checkpoint_meta(str(text))
    archive = tmp_path / 'other.zip'
    with zipfile.ZipFile(str(archive), 'w') as z:
        z.writestr('readme.txt', 'hello')
    assert 'with 0 <name>/data.pkl members' in checkpoint_meta(str(archive))['error']
    with pytest.raises(ValueError, match='no such file'):
        checkpoint_meta(str(tmp_path / 'missing.pth'))


def test_reader_runs_nothing_from_the_file(tmp_path):
    """A pickle whose object tree calls os.system: the plugin's loader refuses it, naming the global, and the
    checkpoint-load row fails with the opt-in; nothing ran."""
    marker = tmp_path / 'ran'

    class Evil(object):
        def __reduce__(self):
            return (os.system, ('touch %s' % marker,))

    path = tmp_path / 'evil.pth'
    with zipfile.ZipFile(str(path), 'w') as z:
        z.writestr('archive/data.pkl', pickle.dumps({'meta': {'mmdet3d_version': '0.17.3'}, 'x': Evil()},
                                                    protocol=2))
    info = checkpoint_meta(str(path))
    assert info['refused'] == '%s.system' % os.name and 'archive/data.pkl' in info['error']
    r = result(run_checks(assume='mmdet3d=0.17.3', checkpoint=str(path), quick=True), 'checkpoint-load')
    assert r.status == 'FAIL' and '--trust-checkpoint' in r.fix
    assert not marker.exists()


def test_reading_needs_no_torch():
    """In a fresh interpreter where importing torch is impossible, the meta is still read, and the classes the
    checkpoint names (torch storages, mmengine's HistoryBuffer) are not imported."""
    code = ('import sys; sys.modules["torch"] = None\n'
            'from kradar_plugin.doctor.probes.checkpoint_meta import checkpoint_meta\n'
            'print(checkpoint_meta(%r)["mmdet3d_version"])\n'
            'print(checkpoint_meta(%r)["mmengine_version"])\n'
            'print(sorted(m for m in sys.modules if m.startswith("mmengine")))' % (MMDET3D_0173, MMENGINE))
    out = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split('\n')[:3] == ['0.17.3', '0.10.7', '[]']


def test_box_convention_from_a_checkpoint():
    results = run_checks(assume='mmdet3d=1.0.0rc6', checkpoint=MMDET3D_0173, quick=True)
    r = result(results, 'box-convention')
    assert r.status == 'WARN' and 'mmdet3d 0.17.3' in r.reason and 'mmdet3d 1.0.0rc6' in r.reason
    assert "box_convention='mmdet3d<1.0'" in r.fix
    same = run_checks(assume='mmdet3d=1.0.0rc4', checkpoint=MMDET3D_RC6_LEGACY, quick=True)
    assert result(same, 'box-convention').status == 'OK'
    r = result(run_checks(assume='mmdet3d=0.17.3', checkpoint=MMENGINE, quick=True), 'box-convention')
    assert r.status == 'WARN' and "box_convention='mmdet3d>=1.0'" in r.fix
    r = result(run_checks(assume='mmdet3d=0.17.3', checkpoint=NO_META, quick=True), 'box-convention')
    assert r.status == 'SKIP' and 'no mmdet3d_version' in r.reason


def test_checkpoint_on_the_command_line(capsys, tmp_path):
    # A consistent planned stack (numba 0.60 takes numpy 1.23.5 on Python 3.11; mmdet3d rc6 with mmcv-full 1.7.0,
    # mmdet 2.28.2, mmseg 0.30.0, whatever this machine has), so only the checkpoint warns.
    rc = main(['--assume', 'mmdet3d=1.0.0rc6,numpy=1.23.5,numba=0.60.0,python=3.11.7,mmcv-full=1.7.0,'
               'mmdet=2.28.2,mmseg=0.30.0,torch=2.0.1,yapf=0.40.1', '--checkpoint', MMDET3D_0173,
               '--quick', '--only', 'WARN'])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith('WARN  box-convention  checkpoint trained with mmdet3d 0.17.3')
    rc = main(['--checkpoint', str(tmp_path / 'missing.pth'), '--quick'])
    assert rc == 2 and 'no such file' in capsys.readouterr().err
