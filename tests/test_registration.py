"""`import kradar_plugin` registers adapters for importable frameworks (at once when a framework is loaded,
else when the first one is imported), survives a broken one with one warning, and can skip registration."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BROKEN_MMCV = os.path.join(ROOT, 'tests', 'fixtures', 'broken_mmcv')


def run(code, pythonpath=(), **env):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join(list(pythonpath) + [ROOT]), **env)
    return subprocess.run([sys.executable, '-W', 'always', '-c', textwrap.dedent(code)], env=full, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def test_broken_framework_gives_one_warning_and_the_core_still_works():
    proc = run('''
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            import kradar_plugin
        from kradar_plugin._registration import RegistrationWarning, failures
        mine = [str(w.message) for w in caught if issubclass(w.category, RegistrationWarning)]
        print(len(mine))
        print(mine[0])
        print(sorted(failures))
        print(kradar_plugin.rotate_iou_eval([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]])[0, 0])
    ''', pythonpath=[BROKEN_MMCV], KRADAR_PLUGIN_REGISTER='now')  # as when a config imports it (mmcv loaded)
    assert proc.returncode == 0, proc.stderr
    count, message, failed, iou = proc.stdout.strip().splitlines()
    assert count == '1'
    assert "mmcv is installed but kradar_plugin.adapters.mmcv1 failed to import" in message
    assert "No module named 'mmcv._ext'" in message and 'kradar-doctor' in message
    assert 'kradar_plugin.adapters.mmcv1' in failed
    assert iou == '0.2'


def test_registration_can_be_skipped():
    proc = run('''
        import sys, kradar_plugin
        print(sorted(m for m in sys.modules if m.split('.')[0] in ('mmcv', 'mmdet', 'torch')))
    ''', KRADAR_PLUGIN_REGISTER='0')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '[]'


def test_components_are_registered_when_frameworks_import():
    pytest.importorskip('mmcv.runner')
    pytest.importorskip('mmdet.datasets')
    proc = run('''
        import kradar_plugin
        from mmcv.runner import HOOKS
        from mmcv.runner.builder import RUNNER_BUILDERS
        from mmdet.datasets import DATASETS, PIPELINES
        from mmdet.models import DETECTORS
        print('EvalOnlyHook' in HOOKS.module_dict, 'EvalOnlyRunnerConstructor' in RUNNER_BUILDERS.module_dict,
              'KRadarPluginDataset' in DATASETS.module_dict, len(kradar_plugin._registration.failures))
    ''')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == 'True True True 0'


def test_registration_waits_for_the_first_framework_import():
    """An evaluation script's `import kradar_plugin` imports no torch/mmcv; a later framework import (here
    mmdet3d's whole API, which imports mmdet and mmcv inside its own __init__) registers everything once,
    after that import completes; mmdet3d's IoU module names are ours from the start."""
    pytest.importorskip('mmdet3d.apis')
    proc = run('''
        import sys, warnings
        import kradar_plugin
        from kradar_plugin import _registration
        # a failed registration ends the run; documented repairs (CompatRepairWarning, e.g. mmcv 1.4.0's CPU
        # scatter) and the frameworks' own warnings do not
        warnings.simplefilter('error', _registration.RegistrationWarning)
        print('R:', sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'mmcv', 'mmdet', 'mmdet3d')
                     and 'rotate_iou' not in m))
        print('R:', getattr(sys.modules['mmdet3d.core.evaluation.kitti_utils.rotate_iou'], '__kradar_plugin__', 0))
        from mmdet3d.apis import train_model
        from mmcv.runner import HOOKS
        from mmdet.datasets import DATASETS
        from mmdet.models import DETECTORS
        print('R:', 'EvalOnlyHook' in HOOKS.module_dict, 'KRadarPluginDataset' in DATASETS.module_dict,
              'TinyRadarPeakDetector' in DETECTORS.module_dict, len(_registration.failures), _registration.deferred,
              [type(f).__name__ for f in sys.meta_path if 'Trigger' in type(f).__name__],
              'exec_module' in vars(sys.modules['mmdet3d'].__spec__.loader))
    ''')
    assert proc.returncode == 0, proc.stderr
    # torch 1.10's cpp_extension prints 'No CUDA runtime is found' to stdout when mmcv imports it: read our lines
    before, alias, after = [line[3:] for line in proc.stdout.splitlines() if line.startswith('R: ')]
    assert before == '[]' and alias == 'True'
    assert after == 'True True True 0 [] [] False'


def test_registration_after_a_failed_framework_import_that_loaded_mmcv(tmp_path):
    """An optional-dependency probe (`try: import mmdet3d`) that fails after importing mmcv must not leave the
    plugin unregistered: the next framework import (a submodule of the loaded mmcv) registers."""
    pytest.importorskip('mmcv.runner')
    fake = tmp_path / 'mmdet3d'
    fake.mkdir()
    (fake / '__init__.py').write_text('import mmcv\nraise ImportError("mmdet3d: this mmcv is not supported")\n')
    proc = run('''
        import sys
        import kradar_plugin
        try:
            import mmdet3d
        except ImportError as exc:
            print('probe failed:', exc)
        print('mmcv' in sys.modules, 'kradar_plugin.adapters.mmcv1' in sys.modules)
        from mmcv.runner import HOOKS
        print('EvalOnlyHook' in HOOKS.module_dict, kradar_plugin._registration.deferred)
    ''', pythonpath=[str(tmp_path)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-3:] == [
        'probe failed: mmdet3d: this mmcv is not supported', 'True False', 'True []']


def test_registration_is_immediate_under_a_loaded_framework_or_when_asked():
    """custom_imports runs after mmcv loaded the config: registration happens inside that import."""
    pytest.importorskip('mmcv.runner')
    proc = run('''
        import sys
        import mmcv
        import kradar_plugin
        print('kradar_plugin.adapters.mmcv1' in sys.modules, 'torch' in sys.modules)
    ''')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == 'True True'
    proc = run('import sys, kradar_plugin; print("kradar_plugin.adapters.mmcv1" in sys.modules)', KRADAR_PLUGIN_REGISTER='now')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == 'True'


@pytest.mark.parametrize('variable', ['KRADAR_EVAL_ONLY', 'KRADAR_EVAL_FIRST', 'KRADAR_EVAL_SAMPLES'])
def test_eval_switch_with_a_broken_runner_adapter_stops_the_import(variable):
    """A config's custom_imports of kradar_plugin must fail (and so stop the run) rather than let a job that
    asked for eval-only train silently because the switch could not be installed."""
    proc = run('''
        import kradar_plugin  # what mmcv's custom_imports does when the config loads
        print('LOADED')
    ''', pythonpath=[BROKEN_MMCV], **{variable: '3' if variable.endswith('SAMPLES') else '1'})
    assert proc.returncode != 0 and 'LOADED' not in proc.stdout
    assert 'SwitchUnavailableError' in proc.stderr, proc.stderr[-2000:]
    assert variable in proc.stderr and "No module named 'mmcv._ext'" in proc.stderr


def test_eval_switch_off_with_a_broken_runner_adapter_only_warns():
    proc = run('import kradar_plugin; print("OK")', pythonpath=[BROKEN_MMCV], KRADAR_EVAL_ONLY='0',
               KRADAR_PLUGIN_REGISTER='now')
    assert proc.returncode == 0 and proc.stdout.strip() == 'OK', proc.stderr
    assert 'RegistrationWarning' in proc.stderr
