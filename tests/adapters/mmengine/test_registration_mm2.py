"""``import kradar_plugin`` on the OpenMMLab 2.0 stack: the 2.0 adapters register, the 1.x ones are not
tried (no RegistrationWarning about ``mmcv.runner``), and a KRADAR_EVAL_* variable installs the switch."""
import json
import subprocess
import sys
import textwrap

from .helpers import ROOT, job_env

import pytest  # noqa: E402

pytestmark = [pytest.mark.mm2]

PROBE = '''
    import json, sys, warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        import kradar_plugin
    from kradar_plugin._registration import RegistrationWarning, failures
    from mmengine.runner import Runner
    from mmdet3d.registry import DATASETS, HOOKS, METRICS, RUNNERS, TRANSFORMS
    alias = sys.modules['mmdet3d.evaluation.functional.kitti_utils.rotate_iou']
    print(json.dumps({
        'registration_warnings': [str(w.message) for w in caught if issubclass(w.category, RegistrationWarning)],
        'failures': sorted(failures),
        'legacy_modules': sorted(m for m in sys.modules if m.startswith(('kradar_plugin.adapters.mmcv1', 'mmcv.runner',
                                                                          'kradar_plugin.demo.tiny_radar'))),
        'hook': HOOKS.get('EvalOnlyHook').__module__,
        'runner': RUNNERS.get('EvalOnlyRunner').__module__,
        'metric': METRICS.get('KRadarMetric').__module__,
        'dataset': DATASETS.get('KRadarDet3DDataset').__module__,
        'transform': TRANSFORMS.get('LoadKRadarPointsFromBEV').__module__,
        'alias': bool(getattr(alias, '__kradar_plugin__', False)),
        'env_switch': bool(getattr(Runner.from_cfg.__func__, '_kradar_env_switch', False)),
    }))
'''


def probe(**env):
    proc = subprocess.run([sys.executable, '-W', 'always', '-c', textwrap.dedent(PROBE)], cwd=ROOT,
                          env=job_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_import_registers_the_2x_adapters_without_warnings():
    out, stderr = probe()
    assert out['registration_warnings'] == [] and 'RegistrationWarning' not in stderr, stderr[-3000:]
    assert out['failures'] == []
    assert out['legacy_modules'] == []
    assert out['hook'] == 'kradar_plugin.adapters.mmengine.eval_only_hook'
    assert out['runner'] == 'kradar_plugin.adapters.mmengine.runner_builder'
    assert out['metric'] == 'kradar_plugin.adapters.mmengine.kradar_metric'
    assert out['dataset'] == out['transform'] == 'kradar_plugin.adapters.mmengine.kradar_det3d'
    assert out['alias'] is True
    assert out['env_switch'] is False


def test_an_eval_variable_installs_the_switch_in_runner_from_cfg():
    out, _ = probe(KRADAR_EVAL_ONLY='1')
    assert out['env_switch'] is True
    assert out['failures'] == []


BROKEN_MMCV_PROBE = '''
    import json, warnings
    import mmengine.config  # loads the config; its custom_imports then import kradar_plugin
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        import kradar_plugin
    from kradar_plugin._registration import RegistrationWarning, failures
    from mmengine.registry import RUNNERS
    print(json.dumps({'warnings': [str(w.message) for w in caught if issubclass(w.category, RegistrationWarning)],
                      'failures': sorted(failures), 'runner': RUNNERS.get('EvalOnlyRunner') is not None}))
'''


def test_a_broken_mmcv_2x_gives_one_warning_and_the_engine_adapters_stay():
    """mmcv whose import fails (no mmcv._ext, as with a CPU-less or mismatched build): the mmdet3d 1.x
    components are reported once, the mmengine adapters (runner, hook, metric) still register."""
    import os
    broken = os.path.join(ROOT, 'tests', 'fixtures', 'broken_mmcv')
    env = job_env({'PYTHONPATH': broken + os.pathsep + ROOT})
    proc = subprocess.run([sys.executable, '-c', textwrap.dedent(BROKEN_MMCV_PROBE)], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out['failures'] == ['kradar_plugin.adapters.mmengine.kradar_det3d'], out
    assert len(out['warnings']) == 1
    assert 'mmdet3d is installed but kradar_plugin.adapters.mmengine.kradar_det3d failed to import' in out['warnings'][0]
    assert "No module named 'mmcv._ext'" in out['warnings'][0]
    assert out['runner'] is True
