"""Shared helpers: judge assumed versions on a fixed, bare machine (no probing), and pick results."""
from kradar_plugin.doctor import checks, environment

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
