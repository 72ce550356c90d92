"""Probes on real files: conda-meta records, /proc driver text, a shm mount, package sources, configs, scripts."""
import json
import os
import sys
import textwrap

import pytest

from kradar_plugin.doctor import probes, run_checks
from kradar_plugin.doctor.probes.config_facts import config_facts
from kradar_plugin.doctor.probes.script_facts import script_facts

from .helpers import result


def _conda_record(meta, name, version, build='py37h0'):
    with open(os.path.join(meta, '%s-%s-%s.json' % (name, version, build)), 'w') as f:
        json.dump({'name': name, 'version': version, 'build': build}, f)


def test_conda_meta_records(tmp_path):
    meta = tmp_path / 'conda-meta'
    meta.mkdir()
    _conda_record(str(meta), 'numpy', '1.19.5')
    _conda_record(str(meta), 'numpy-base', '1.20.3')
    _conda_record(str(meta), 'cudatoolkit', '11.3.1', 'h2bc3f7f_2')
    _conda_record(str(meta), 'numpydoc', '1.1.0', 'pyhd3eb1b0_1')
    found = probes.probe_conda_packages(str(tmp_path))
    assert found == {'numpy': '1.19.5', 'numpy-base': '1.20.3', 'cudatoolkit': '11.3.1'}
    assert probes.probe_cuda_toolkit(found) == ('11.3.1', 'conda:cudatoolkit')
    assert probes.probe_conda_packages(str(tmp_path / 'elsewhere')) == {}


def test_toolkit_version_files(tmp_path):
    (tmp_path / 'version.json').write_text(json.dumps({'cuda': {'name': 'CUDA SDK', 'version': '12.2.140'}}))
    assert probes.toolkit_version_from_home(str(tmp_path)) == '12.2.140'
    old = tmp_path / 'old'
    old.mkdir()
    (old / 'version.txt').write_text('CUDA Version 11.3.109\n')
    assert probes.toolkit_version_from_home(str(old)) == '11.3.109'


def test_driver_from_proc_text(tmp_path):
    f = tmp_path / 'version'
    f.write_text('NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n'
                 'GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n')
    assert probes.probe_driver(str(f)) == '535.104.05'
    f.write_text('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build\n')
    assert probes.probe_driver(str(f)) == '580.65.06'
    assert probes.probe_driver(str(tmp_path / 'missing')) is None
    assert probes.probe_gpu_count(str(tmp_path / 'missing')) == 0


def test_shm_probe_on_a_real_mount(tmp_path):
    size = probes.probe_shm(str(tmp_path))
    st = os.statvfs(str(tmp_path))
    assert size == st.f_frsize * st.f_blocks > 0
    assert probes.probe_shm(str(tmp_path / 'missing')) is None


def test_injected_shm_reaches_the_rule(tmp_path):
    """The /dev/shm probe is injectable: a 64 MiB shm with a 2-worker, 2-GPU config FAILs."""
    cfg = tmp_path / 'cfg.py'
    cfg.write_text('data = dict(samples_per_gpu=2, workers_per_gpu=2)\ngpus = 2\n')
    results = run_checks(config=str(cfg), quick=True, probes={'shm': 64 * 2 ** 20})
    r = result(results, 'shm')
    assert r.status == 'FAIL' and '2 workers_per_gpu x 2 GPU(s) = 4 workers' in r.reason
    assert '--shm-size=2g' in r.fix
    results = run_checks(config=str(cfg), quick=True, probes={'shm': 4 * 2 ** 30})
    assert result(results, 'shm').status == 'OK'


def test_parse_version_asserts_from_source():
    src = textwrap.dedent('''
        mmcv_minimum_version = '1.3.8'
        mmcv_maximum_version = '1.5.0'
        assert (mmcv_version >= digit_version(mmcv_minimum_version)
                and mmcv_version <= digit_version(mmcv_maximum_version))
        mmdet_minimum_version = '2.14.0'
        mmdet_maximum_version = '3.0.0'
    ''')
    assert probes.parse_version_asserts(src) == {'mmcv-full': ('1.3.8', '1.5.0', True, True),
                                                 'mmdet': ('2.14.0', '3.0.0', True, True)}
    relaxed = textwrap.dedent('''
        mmcv_minimum_version = '2.0.0rc4'
        mmcv_maximum_version = '2.2.0'
        if not (mmcv_version >= digit_version(mmcv_minimum_version)
                and mmcv_version < digit_version(mmcv_maximum_version)):
            warnings.warn('may be incompatible')
    ''')
    assert probes.parse_version_asserts(relaxed) == {'mmcv-full': ('2.0.0rc4', '2.2.0', False, False)}
    mmseg = "MMCV_MIN = '1.3.13'\nMMCV_MAX = '1.8.0'\nassert (mmcv_min_version <= mmcv_version <= mmcv_max_version)\n"
    assert probes.parse_version_asserts(mmseg) == {'mmcv-full': ('1.3.13', '1.8.0', True, True)}


def test_installed_mmdet_ranges_are_read_without_import():
    ranges = probes.probe_installed_ranges()
    if probes.package_dir('mmdet') is None:
        assert 'mmdet' not in ranges
        pytest.skip('mmdet not installed in this environment')
    # the released __init__.py files: mmdet 2.28.2 mmcv_minimum_version = '1.3.17', mmcv_maximum_version =
    # '1.8.0'; mmdet 2.19.0 (EchoFusion's) '1.3.8', '1.5.0'
    import mmdet
    released = {'2.28.2': ('1.3.17', '1.8.0'), '2.19.0': ('1.3.8', '1.5.0')}
    if mmdet.__version__ not in released:
        pytest.skip('no recorded range for mmdet {}'.format(mmdet.__version__))
    assert ranges['mmdet']['mmcv-full'][:2] == released[mmdet.__version__]


def test_config_facts_with_base_and_delete(tmp_path):
    (tmp_path / '_base_').mkdir()
    (tmp_path / '_base_' / 'default.py').write_text(
        "data = dict(samples_per_gpu=4, workers_per_gpu=8, train=dict(type='A'))\n"
        "dist_params = dict(backend='nccl')\nevaluation = dict(interval=1)\n")
    (tmp_path / 'cfg.py').write_text(
        "import datetime\n_base_ = ['./_base_/default.py']\n"
        "data = dict(workers_per_gpu=2, train=dict(_delete_=True, type='B'))\n"
        "dist_params = dict(backend='nccl', timeout=datetime.timedelta(minutes=90))\n"
        "work_dir = '{{fileDirname}}/work'\ngpu_ids = range(3)\ngpu_ids = [0, 1, 2]\n")
    try:
        facts = config_facts(str(tmp_path / 'cfg.py'))
    except ValueError as exc:
        # mmcv 1.4 (EchoFusion's) keeps `datetime` in the config dict and cannot deep-copy it: the run itself
        # would stop in Config.fromfile; the doctor names that instead of crashing
        mmcv = sys.modules.get('mmcv')
        assert mmcv is not None and mmcv.__version__ < '1.7', exc
        assert 'cannot load' in str(exc) and 'cfg.py' in str(exc) and '`import datetime`' in str(exc), exc
        return
    assert facts['workers-per-gpu'] == 2 and facts['samples-per-gpu'] == 4
    assert facts['gpus'] == 3 and facts['dist-timeout'] == 5400.0 and facts['evaluation'] is True


def test_config_timeout_in_seconds_and_invalid(tmp_path):
    (tmp_path / 'a.py').write_text("dist_params = dict(backend='nccl', timeout=5400)\n")
    assert config_facts(str(tmp_path / 'a.py'))['dist-timeout'] == 5400.0
    (tmp_path / 'b.py').write_text("dist_params = dict(backend='nccl', timeout='90min')\n")
    results = run_checks(config=str(tmp_path / 'b.py'), quick=True)
    assert result(results, 'dist-timeout').status == 'FAIL'
    with pytest.raises(ValueError, match='no such file'):
        config_facts(str(tmp_path / 'missing.py'))


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


UNDERSCORE_ONLY = '''
    import argparse, os
    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument('config')
        parser.add_argument('--local_rank', type=int, default=0)
        args = parser.parse_args()
        if 'LOCAL_RANK' not in os.environ:
            os.environ['LOCAL_RANK'] = str(args.local_rank)
        return args
'''
BOTH = '''
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
'''
ENV_ONLY = '''
    import os
    local_rank = int(os.environ.get('LOCAL_RANK', 0))
'''


def test_script_facts(tmp_path):
    f = script_facts(_script(tmp_path, 'u.py', UNDERSCORE_ONLY))
    assert f['declares'] == ['--local_rank'] and f['reads-env'] and not f['known-args']
    assert script_facts(_script(tmp_path, 'b.py', BOTH))['declares'] == ['--local-rank', '--local_rank']
    f = script_facts(_script(tmp_path, 'e.py', ENV_ONLY))
    assert f['declares'] == [] and f['reads-env']
    with pytest.raises(ValueError, match='does not parse'):
        script_facts(_script(tmp_path, 'bad.py', 'def (:\n'))


@pytest.mark.parametrize('torch, body, status', [
    ('2.0.1', UNDERSCORE_ONLY, 'FAIL'),   # launch passes --local-rank=N: "unrecognized arguments"
    ('1.10.0', UNDERSCORE_ONLY, 'OK'),    # torch < 2.0 passes --local_rank=N
    ('2.0.1', BOTH, 'OK'),
    ('1.10.0', BOTH, 'OK'),
    ('2.0.1', ENV_ONLY, 'WARN'),          # torchrun only
    ('2.0.1', UNDERSCORE_ONLY.replace('parser.parse_args()', 'parser.parse_known_args()[0]'), 'OK'),
])
def test_local_rank_with_real_scripts(tmp_path, torch, body, status):
    path = _script(tmp_path, 'train.py', body)
    results = run_checks(assume='torch=%s' % torch, train_script=path, quick=True)
    r = result(results, 'local-rank')
    assert r.status == status, r
    if status == 'FAIL':
        assert '--local-rank' in r.reason and "'--local_rank', '--local-rank'" in r.fix


def test_sharing_strategy_from_script(tmp_path):
    path = _script(tmp_path, 'train.py', textwrap.dedent(BOTH) + "import torch.multiprocessing as mp\n"
                                                                 "mp.set_sharing_strategy('file_system')\n")
    # shm-managers=0: only the script's strategy is judged (this machine may run torch_shm_manager daemons)
    results = run_checks(assume='torch=2.0.1', train_script=path, quick=True, probes={'shm-managers': 0})
    assert result(results, 'sharing-strategy').status == 'WARN'


def test_quick_spawns_nothing(monkeypatch):
    """Quick mode (tools/train.py's pre-run check) starts no subprocess; its duration is measured by
    benchmarks/bench_doctor.py, not asserted here."""
    import subprocess

    def no_subprocess(*args, **kwargs):
        raise AssertionError('quick mode must not start a subprocess: %r' % (args,))

    monkeypatch.setattr(subprocess, 'run', no_subprocess)
    monkeypatch.setattr(subprocess, 'Popen', no_subprocess)
    results = run_checks(quick=True, compile_test=True)
    assert result(results, 'cuda-compile').status == 'SKIP'
    r = result(results, 'imports')
    assert r.status == 'SKIP' and 'quick mode' in r.reason


def test_parse_version_asserts_mmseg_exclusive_and_mmengine():
    # mmsegmentation 0.30.0 and 1.0.0 (PyPI wheels), mmseg/__init__.py: MMCV_MIN/MMCV_MAX and
    # "assert (mmcv_min_version <= mmcv_version < mmcv_max_version)"; 1.0.0 also MMENGINE_MIN/MAX the same way.
    mmseg030 = textwrap.dedent("""
        MMCV_MIN = '1.3.13'
        MMCV_MAX = '1.8.0'
        mmcv_min_version = digit_version(MMCV_MIN)
        mmcv_max_version = digit_version(MMCV_MAX)
        assert (mmcv_min_version <= mmcv_version < mmcv_max_version), \\
            f'MMCV=={mmcv.__version__} is used but incompatible. '
    """)
    assert probes.parse_version_asserts(mmseg030) == {'mmcv-full': ('1.3.13', '1.8.0', False, True)}
    mmseg100 = mmseg030.replace("'1.3.13'", "'2.0.0rc4'").replace("'1.8.0'", "'2.1.0'") + textwrap.dedent("""
        MMENGINE_MIN = '0.5.0'
        MMENGINE_MAX = '1.0.0'
        assert (mmengine_min_version <= mmengine_version < mmengine_max_version)
    """)
    assert probes.parse_version_asserts(mmseg100) == {'mmcv-full': ('2.0.0rc4', '2.1.0', False, True),
                                                      'mmengine': ('0.5.0', '1.0.0', False, True)}


def test_mmseg_is_found_under_its_distribution_name(tmp_path, monkeypatch):
    """mmseg is distributed as 'mmsegmentation': the metadata probe must look that name up."""
    info = tmp_path / 'mmsegmentation-0.30.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: mmsegmentation\nVersion: 0.30.0\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert probes.probe_distributions(('mmseg',)) == {'mmseg': '0.30.0'}


def test_pipeline_types_from_a_config(tmp_path):
    (tmp_path / 'cfg.py').write_text(textwrap.dedent("""
        db_sampler = dict(type='DataBaseSampler', rate=1.0)
        train_pipeline = [dict(type='LoadPointsFromFile'), dict(type='ObjectSample', db_sampler=db_sampler),
                          dict(type='ObjectRangeFilter', point_cloud_range=[0, -40, -3, 70, 40, 1])]
        test_pipeline = [dict(type='MultiScaleFlipAug3D', transforms=[dict(type='GlobalRotScaleTrans')])]
        data = dict(train=dict(type='RepeatDataset', dataset=dict(type='KittiDataset', pipeline=train_pipeline)),
                    test=dict(type='KittiDataset', pipeline=test_pipeline))
    """))
    facts = config_facts(str(tmp_path / 'cfg.py'))
    # Dataset types are not transforms; the nested db_sampler and MultiScaleFlipAug3D's transforms are inside
    # a pipeline and count.
    assert facts['pipeline'] == ['DataBaseSampler', 'GlobalRotScaleTrans', 'LoadPointsFromFile',
                                 'MultiScaleFlipAug3D', 'ObjectRangeFilter', 'ObjectSample']
    (tmp_path / 'plain.py').write_text("data = dict(workers_per_gpu=2)\n")
    assert 'pipeline' not in config_facts(str(tmp_path / 'plain.py'))


def _package(root, name, files):
    pkg = root / name
    pkg.mkdir()
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_import_probe_names_the_failing_module(tmp_path, monkeypatch):
    """Real packages on PYTHONPATH, imported by the real probe subprocess: the top level imports, a submodule
    fails on a missing dependency, and a package whose import kills the interpreter."""
    _package(tmp_path, 'mmdet3d', {'__init__.py': "__version__ = '1.0.0rc6'\n",
                                   'models/__init__.py': 'x = 1\n',
                                   'datasets/__init__.py': 'import lyft_dataset_sdk_missing_for_the_test\n'})
    _package(tmp_path, 'mmdet', {'__init__.py': 'import os\nos._exit(3)\n'})
    _package(tmp_path, 'mmengine', {'__init__.py': '', 'runner.py': ''})
    monkeypatch.setenv('PYTHONPATH', str(tmp_path))
    out = probes.import_probe({'mmdet3d', 'mmdet', 'mmengine'})
    assert out['imports-checked'] == ['mmengine', 'mmengine.runner', 'mmdet3d', 'mmdet3d.models']
    errors = out['import-errors']
    assert set(errors) == {'mmdet', 'mmdet3d'}
    assert errors['mmdet3d'] == ('mmdet3d.datasets',
                                 "ModuleNotFoundError: No module named 'lyft_dataset_sdk_missing_for_the_test'")
    # The crash is reported against the module being imported, with the exit code; mmdet3d, not reached by
    # that interpreter, was imported in a new one.
    assert errors['mmdet'][0] == 'mmdet' and 'exited with 3' in errors['mmdet'][1]


def test_import_probe_interpreter_that_cannot_start(tmp_path):
    out = probes.import_probe({'mmdet'}, python=sys.executable + '-missing')
    assert 'probe-error' in out
    bad = tmp_path / 'python'
    bad.write_text('#!/bin/sh\necho broken >&2\nexit 7\n')
    bad.chmod(0o755)
    out = probes.import_probe({'mmdet', 'mmdet3d'}, python=str(bad))
    assert out['imports-checked'] == []
    assert out['import-errors'] == {'mmdet': ('mmdet', 'the interpreter exited with 7 (broken)'),
                                    'mmdet3d': ('mmdet3d', 'the interpreter exited with 7 (broken)')}


def test_import_probe_result_reaches_the_rule(tmp_path, monkeypatch):
    _package(tmp_path, 'mmdet3d', {'__init__.py': "raise AssertionError('MMCV==1.7.2 is used but incompatible.')\n"})
    monkeypatch.setenv('PYTHONPATH', str(tmp_path))
    results = run_checks(probes=dict(probes.import_probe({'mmdet3d'}), mmdet3d='1.0.0rc6'), quick=True)
    r = result(results, 'imports')
    assert r.status == 'FAIL' and 'import mmdet3d fails: AssertionError: MMCV==1.7.2' in r.reason
