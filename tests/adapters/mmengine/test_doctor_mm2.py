"""The doctor on the real OpenMMLab 2.0 stacks (.venv-mm2, .venv-latest): every 2.0 rule judges the installed
versions (none is skipped for want of a package), nothing FAILs, and the one known WARN is mmdet3d 1.4's np.long
on numpy 1.x (none on today's numpy 2 stack)."""
import os
import subprocess
import sys

from kradar_plugin.doctor import format_report, run_checks

import pytest  # noqa: E402

pytestmark = [pytest.mark.mm2]

STACK_CHECKS = ('mmcv-full', 'mmcv-range', 'openmmlab-mix', 'imports', 'mmcv-wheel', 'mmengine-torch', 'yapf',
                'numba-numpy', 'mmdet3d-numpy')


def test_the_2_0_stack_is_judged_and_has_no_fail():
    results = run_checks()
    by_name = {r.name: r for r in results}
    assert [r for r in results if r.status == 'FAIL'] == [], format_report(results)
    for name in STACK_CHECKS:
        assert by_name[name].status in ('OK', 'WARN'), by_name[name]
    import mmcv
    import mmdet3d
    import mmengine
    assert mmcv.__version__ in by_name['mmcv-wheel'].reason and 'mmcv._ext imports' in by_name['mmcv-wheel'].reason
    assert mmengine.__version__ in by_name['mmengine-torch'].reason
    imports = by_name['imports'].reason
    assert all(m in imports for m in ('mmengine.runner', 'mmdet.models', 'mmdet3d.models', 'mmdet3d.datasets'))
    import numpy
    if numpy.__version__.startswith('1.'):
        # mmdet3d 1.4's ObjectSample uses np.long (gone in numpy 1.24..1.26): the only warning on this stack
        assert by_name['mmdet3d-numpy'].status == 'WARN' and 'np.long' in by_name['mmdet3d-numpy'].reason
        assert mmdet3d.__version__ in by_name['mmdet3d-numpy'].reason
        warned = ['mmdet3d-numpy']
    else:      # today's stack (.venv-latest): np.long is back in numpy 2, np.in1d is there below 2.4
        warned = []
    # (machine-dependent checks such as /dev/shm or leftover processes may warn elsewhere; the stack's may not)
    assert [n for n in STACK_CHECKS if by_name[n].status == 'WARN'] == warned, format_report(results)


def test_the_console_script_exits_0_without_importing_the_frameworks():
    proc = subprocess.run([sys.executable, '-X', 'importtime', '-c',
                           'import sys, kradar_cli; sys.exit(kradar_cli.doctor_main(sys.argv[1:]))', '--quick'],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                          env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith('kradar-doctor: OK (0 fail')
    imported = {line.split('|')[-1].strip().split('.')[0] for line in proc.stderr.splitlines()
                if line.startswith('import time:')}
    assert not imported & {'torch', 'mmengine', 'mmcv', 'mmdet', 'mmdet3d'}, sorted(imported)
