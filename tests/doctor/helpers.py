"""Shared helpers: judge assumed versions on a fixed, bare machine (no probing), and pick results."""
from kradar_plugin.doctor import checks, environment
from kradar_plugin.facts.result import CheckResult

# A machine fact sheet with nothing installed and no GPU: every fact a rule reads comes from the test.
BARE_MACHINE = {'python': '3.8.10', 'conda': False, 'driver': None, 'gpus': 0, 'shm': 8 * 2 ** 30,
                'nofile': 65536, 'shm-managers': 0, 'installed-ranges': {}}

BLOG = ('python=3.7.16,torch=1.10.0,cuda=11.3,mmcv-full=1.4.0,mmdet=2.19.0,mmseg=0.20.0,mmdet3d=0.17.3,'
        'numba=0.48.0,numpy=1.20.3,numpy-base=1.20.3,yapf=0.40.2')

# Facts of this machine that the blog/planned-environment tests must not depend on.
MACHINE_INDEPENDENT = {'driver': None, 'gpus': 0, 'gpu-cc': None, 'shm': 8 * 2 ** 30, 'nofile': 65536,
                       'shm-managers': 0, 'mmengine': None, 'mmcv-lite': None, 'sharing-strategy': None,
                       'probe-error': None, 'leftovers': None, 'shm-free': None}


def judge(assume, machine=None, **extra):
    """CheckResults for ``assume`` on BARE_MACHINE (plus ``machine`` overrides), without probing."""
    live = dict(BARE_MACHINE)
    live.update(machine or {})
    live.update(extra)
    facts = environment.merge(live, environment.parse_assume(assume))
    if 'gpus-for-run' not in facts:
        facts['gpus-for-run'] = facts.get('gpus') or 1
    return checks.evaluate(facts)


def by_status(results, status):
    return sorted(r.name for r in results if r.status == status)


def result(results, name):
    found = [r for r in results if r.name == name]
    assert len(found) == 1, (name, found)
    return found[0]


# Fact sheets that drive most rule branches (no probing): passing, failing and skipped cases of each check.
STACK_2X = ('python=3.10.12,torch=2.6.0+cu118,mmcv=2.2.0,mmdet=3.3.0,mmdet3d=1.4.0,mmengine=0.10.7,'
            'numpy=1.24.4,numba=0.58.1,yapf=0.40.2,cuda=11.8,driver=580.65.06,gpu-cc=8.6/9.0,mmcv-ext=ok,'
            'eval-minutes=40,dist-timeout=1800,checkpoint-mmdet3d=0.17.3,pipeline=ObjectSample')
RICH_MACHINE = {
    'gpus': 2, 'gpu-cc': ['8.6'], 'torch-arch': ['sm_80'], 'libnvvm': None, 'conda': True, 'numpy': '1.19.5',
    'numpy-base': '1.20.3', 'numpy-runtime': '1.21.0', 'numba-import': 'ImportError: x', 'shm': 64 * 2 ** 20,
    'shm-free': 32 * 2 ** 20, 'nofile': 1024, 'shm-managers': 2, 'config': 'cfg.py', 'workers-per-gpu': 2,
    'evaluation': True, 'find-unused-parameters': True, 'sharing-strategy': 'file_system', 'torch': '1.10.0',
    'torch-cuda': '11.3', 'mmcv-full': '1.4.0', 'mmcv-cuda': '10.2', 'mmcv-torch': '1.9.0', 'mmcv-ext-file': False,
    'installed-ranges': {'mmdet': {'mmcv-full': ('1.3.17', '1.8.0', True, False)}}, 'mmdet': '2.28.2',
    'mmdet3d': '1.0.0rc6', 'import-errors': {'mmdet3d': ('mmdet3d.datasets', "ModuleNotFoundError: No module "
                                                                             "named 'lyft_dataset_sdk'")},
    'imports-checked': ['mmdet'], 'probe-error': 'x', 'compile-test': ('fail', 'NvvmError'),
    'leftovers': {'processes': [{'pid': 1, 'age_s': 5, 'cmd': 'python train.py'}]},
    'loader-demands': [{'name': 'train', 'workers': 2, 'prefetch': 2, 'batch-bytes': 2 ** 20}],
    'script-facts': {'script': 'train.py', 'declares': ['--local_rank'], 'reads-env': False,
                     'known-args': False, 'sharing-strategy': None, 'sets-start-method': False},
    'checkpoint': {'path': 'x.pth', 'format': 'zip', 'meta': True, 'mmengine_version': '0.10.7'},
    'loader-probe-error': 'rank 0 exited with 1: KeyError',
}
FACT_SHEETS = ((None, {}), (BLOG, {}), (STACK_2X, {}), ('mmcv-lite=2.1.0,mmdet=3.3.0', {}),
               ('mmcv=1.7.0,mmcv-full=1.7.2,mmcv-lite=2.1.0', {}), (None, RICH_MACHINE),
               ('torch=2.1.0', dict(RICH_MACHINE, **{'torch-cuda': 'cpu', 'dist-timeout-invalid': "'x'",
                                                     'loader-probe-error': None, 'checkpoint': {'error': 'x'},
                                                     'pitfalls': [CheckResult('sampler', 'FAIL', 'r', 'f'),
                                                                  CheckResult('worker-cuda', 'OK', 'r', '')]})))


def fact_sheets():
    """The facts of each FACT_SHEETS entry, as ``judge`` builds them."""
    sheets = []
    for assume, machine in FACT_SHEETS:
        live = dict(BARE_MACHINE)
        live.update(machine)
        facts = environment.merge(live, environment.parse_assume(assume))
        facts.setdefault('gpus-for-run', facts.get('gpus') or 1)
        sheets.append(facts)
    return sheets
