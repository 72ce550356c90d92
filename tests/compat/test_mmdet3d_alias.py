"""The drop-in import path against a fixture laid out like mmdet3d whose rotate_iou.py really crashes at
import (an eagerly typed ``@cuda.jit`` kernel on a machine without an NVIDIA GPU)."""
import os
import subprocess
import sys
import textwrap

import pytest

from kradar_plugin.ops import backend_choice as guard

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, 'tests', 'compat', 'fixtures', 'crashing_mmdet3d')


def run(code, with_fixture=True):
    env = dict(os.environ)
    env.pop('NUMBA_ENABLE_CUDASIM', None)
    env['PYTHONPATH'] = os.pathsep.join(([FIXTURE] if with_fixture else []) + [ROOT])
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], env=env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


needs_no_gpu = pytest.mark.skipif(guard.nvidia_driver_version() is not None,
                                  reason='the fixture only crashes on a machine without an NVIDIA driver')


@needs_no_gpu
def test_fixture_really_crashes_without_the_plugin():
    pytest.importorskip('numba')
    proc = run('import mmdet3d.core.evaluation.kitti_utils.rotate_iou')
    assert proc.returncode != 0
    assert 'CudaSupportError' in proc.stderr


@needs_no_gpu
def test_drop_in_paths_yield_the_guarded_function():
    pytest.importorskip('numba')
    proc = run('''
        import sys
        import kradar_plugin
        from mmdet3d.core.evaluation.kitti_utils.rotate_iou import rotate_iou_gpu_eval as old_path
        from mmdet3d.evaluation.functional.kitti_utils.rotate_iou import rotate_iou_gpu_eval as new_path
        from mmdet3d.core.evaluation.kitti_utils import bev_box_overlap   # lazy import inside, like mmdet3d
        assert old_path is new_path is kradar_plugin.rotate_iou_gpu_eval
        print(old_path([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]])[0, 0],
              bev_box_overlap([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]], 0)[0, 0])
        real = [m for m in sys.modules.values() if getattr(m, 'IMPORTED_REAL_MODULE', False)]
        print('real modules executed:', len(real))
        try:
            getattr(sys.modules['mmdet3d.core.evaluation.kitti_utils.rotate_iou'], 'rotate_iou_kernel_eval')
        except AttributeError as exc:
            print('missing name:', exc)
    ''')
    assert proc.returncode == 0, proc.stderr
    # torch < 1.11's cpp_extension (imported by mmcv 1.4) prints this on a CPU machine with a CUDA toolkit
    lines = [line for line in proc.stdout.splitlines() if not line.startswith('No CUDA runtime is found')]
    assert lines[0] == '0.2 0.25'
    assert lines[1] == 'real modules executed: 0'
    assert 'served by kradar_plugin' in lines[2]


def test_nothing_is_faked_without_mmdet3d():
    proc = run('''
        import sys, importlib.util
        import kradar_plugin
        assert importlib.util.find_spec('mmdet3d') is None
        print(sorted(m for m in sys.modules if m.startswith('mmdet3d')))
    ''', with_fixture=False)
    if 'AssertionError' in proc.stderr:
        pytest.skip('mmdet3d is installed here')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '[]'
