"""The documented repair of mmdet3d 1.4's version gate (kradar_plugin.compat.mmdet3d_version_gate): only the
maxima that refuse the installed mmcv/mmdet are raised, to the next minor of what is installed; the asserts stay;
a second run changes nothing. Run on a copy of mmdet3d 1.4.0's own ``__init__.py`` text (its version block)."""
import subprocess
import sys

from kradar_plugin.compat.mmdet3d_version_gate import next_minor, planned_edits, repair
from tests.launching import ROOT

MMDET3D_140_INIT = '''import mmcv
import mmdet
import mmengine
from mmengine.utils import digit_version

from .version import __version__, version_info

mmcv_minimum_version = '2.0.0rc4'
mmcv_maximum_version = '2.2.0'
mmcv_version = digit_version(mmcv.__version__)

mmengine_minimum_version = '0.8.0'
mmengine_maximum_version = '1.0.0'
mmengine_version = digit_version(mmengine.__version__)

mmdet_minimum_version = '3.0.0rc5'
mmdet_maximum_version = '3.4.0'
mmdet_version = digit_version(mmdet.__version__)

assert (mmcv_version >= digit_version(mmcv_minimum_version)
        and mmcv_version < digit_version(mmcv_maximum_version)), 'MMCV'

assert (mmdet_version >= digit_version(mmdet_minimum_version)
        and mmdet_version < digit_version(mmdet_maximum_version)), 'MMDET'
'''


def test_next_minor():
    assert next_minor('2.3.6') == '2.4.0' and next_minor('3.5.1') == '3.6.0' and next_minor('2.2.0') == '2.3.0'


def test_only_refused_maxima_are_raised_once(tmp_path):
    init = tmp_path / '__init__.py'
    init.write_text(MMDET3D_140_INIT)
    edits = repair(str(init), {'mmcv': '2.3.6', 'mmdet': '3.5.1'})
    assert edits == [('mmcv_maximum_version', '2.2.0', '2.4.0'), ('mmdet_maximum_version', '3.4.0', '3.6.0')]
    text = init.read_text()
    assert "mmcv_maximum_version = '2.4.0'  # raised by kradar_plugin.compat.mmdet3d_version_gate (was 2.2.0)" in text
    assert "mmdet_maximum_version = '3.6.0'" in text and "mmengine_maximum_version = '1.0.0'" in text
    assert 'assert (mmcv_version >= digit_version(mmcv_minimum_version)' in text    # the gate itself stays
    assert repair(str(init), {'mmcv': '2.3.6', 'mmdet': '3.5.1'}) == [] and init.read_text() == text


def test_a_supported_combination_is_left_alone(tmp_path):
    init = tmp_path / '__init__.py'
    init.write_text(MMDET3D_140_INIT)
    assert repair(str(init), {'mmcv': '2.1.0', 'mmdet': '3.3.0'}) == []
    assert init.read_text() == MMDET3D_140_INIT
    assert planned_edits(MMDET3D_140_INIT, {'mmcv': '2.1.0', 'mmdet': '3.4.0'}) == [
        ('mmdet_maximum_version', '3.4.0', '3.5.0')]


def test_the_command_line_checks_without_mmdet3d():
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.compat.mmdet3d_version_gate', '--check'],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120)
    assert proc.returncode in (0, 1) and 'Traceback' not in proc.stderr, proc.stderr
    assert proc.stdout.strip(), proc.stdout


def test_inclusive_maxima_of_mmdet3d_1_0_refuse_only_above():
    text = MMDET3D_140_INIT.replace('< digit_version(mmcv_maximum_version)', '<= digit_version(mmcv_maximum_version)')
    text = text.replace("mmcv_maximum_version = '2.2.0'", "mmcv_maximum_version = '1.7.0'")
    assert planned_edits(text, {'mmcv': '1.7.0'}) == []
    assert planned_edits(text, {'mmcv': '1.7.2'}) == [('mmcv_maximum_version', '1.7.0', '1.8.0')]
