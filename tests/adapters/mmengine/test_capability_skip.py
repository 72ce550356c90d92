"""The 2.0 tests skip by capability (conftest.py): on a 2.0 stack whose ``import mmcv._ext`` fails (as after a
``pip install`` of an mmcv 2.x sdist in an isolated build, without torch), a module that needs compiled ops is
reported skipped with that error and the rebuild command, not as a collection error; the teardown test still runs.
The failing import is made real in a child pytest by a meta-path finder that refuses ``mmcv._ext``."""
import os
import subprocess
import sys
import textwrap

import pytest

from tests.launching import ROOT

pytestmark = [pytest.mark.mm2]

BLOCKER = '''
import sys
class RefuseExt(object):
    def find_spec(self, name, path=None, target=None):
        if name == 'mmcv._ext':
            raise ModuleNotFoundError("No module named 'mmcv._ext'", name=name)
        return None
sys.meta_path.insert(0, RefuseExt())
'''


def test_modules_needing_compiled_ops_skip_with_the_reason(tmp_path):
    (tmp_path / 'sitecustomize.py').write_text(textwrap.dedent(BLOCKER))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    here = 'tests/adapters/mmengine/'
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-rs', '-p', 'no:cacheprovider', '-p', 'no:xdist',
                           here + 'test_kradar_det3d.py', here + 'test_cpu_dist.py', '-k', 'not step and not wrapper'],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stdout
    assert 'error' not in proc.stdout.splitlines()[-1], proc.stdout
    assert '1 passed, 1 skipped' in proc.stdout.splitlines()[-1], proc.stdout
    assert "import mmcv._ext fails (ModuleNotFoundError: No module named 'mmcv._ext')" in proc.stdout
    assert 'MMCV_WITH_OPS=1 pip install --no-build-isolation' in proc.stdout
