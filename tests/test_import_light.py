"""`import kradar_plugin` and the core work with numpy alone: torch, mmcv, mmdet, mmdet3d and numba are
made unimportable in a fresh interpreter."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCKED = ('torch', 'torchvision', 'mmcv', 'mmdet', 'mmdet3d', 'mmengine', 'numba', 'shapely', 'matplotlib')


def run_blocked(body):
    """Run ``body`` in a fresh interpreter in which the BLOCKED packages cannot be imported; its stdout lines."""
    code = textwrap.dedent('''
        import sys
        BLOCKED = %r
        class Block(object):
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in BLOCKED:
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
    ''' % (BLOCKED,)) + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('KRADAR_IOU_BACKEND', None)
    proc = subprocess.run([sys.executable, '-c', code], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_import_with_numpy_alone():
    assert run_blocked('''
        import kradar_plugin
        from kradar_plugin import evaluation, files, ops
        from kradar_plugin.files import create_data, kitti_folders, relabel
        from kradar_plugin.ops import backend_choice as guard
        iou = kradar_plugin.rotate_iou_eval([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]])
        print(guard.select().name, round(float(iou[0, 0]), 12))
        print(sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED))
    ''') == ['numpy 0.2', '[]']


def test_dataset_evaluation_imports_without_mmcv():
    """The 1.x dataset ``evaluate`` lives in adapters/mmcv1 and is importable without mmcv (the 2.0 suite
    compares KRadarMetric with it); the runner names say what is missing."""
    assert run_blocked('''
        from kradar_plugin.adapters.mmcv1 import kradar_eval_mixin
        print(kradar_eval_mixin.KRadarEvalMixin.__module__)
        try:
            from kradar_plugin.adapters.mmcv1 import EvalOnlyHook
        except ImportError as exc:
            print(exc)
        print(sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED))
    ''') == ['kradar_plugin.adapters.mmcv1.kradar_eval_mixin',
              'kradar_plugin.adapters.mmcv1.EvalOnlyHook needs mmcv-full 1.x: mmcv is not installed', '[]']
