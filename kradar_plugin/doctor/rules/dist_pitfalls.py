"""Judges of the distributed pitfalls (sampler, worker-pickle, worker-cuda, import-cuda, ddp-inplace-view,
unused-params, shm-batch, leftovers).

Judged on the real loaders by probes/loader_probe.py (``--config``, not ``--quick``) and in the eval-only
preflight; the judgments live in kradar_plugin.doctor.pitfalls (pure), these judges pick them from the facts
('pitfalls': the loader probe's CheckResults) or apply them to facts.
"""
from ..report import Finding


def _pitfall_skip(name, facts):
    if facts.get('loader-probe-error'):
        if name == 'sampler':
            return Finding('WARN', 'the loaders were not checked: %s' % facts['loader-probe-error'],
                           'make data.train/data.val build (python -m kradar_plugin.doctor.probes.loader_probe '
                           'shows the whole error), then re-run')
        return Finding('SKIP', 'the loaders could not be built (see sampler)')
    if not facts.get('config'):
        return Finding('SKIP', 'needs --config')
    if facts.get('loader-probe-skipped'):
        return Finding('SKIP', facts['loader-probe-skipped'])
    if name == 'unused-params':
        return Finding('SKIP', 'opt-in: --probe-model (one CPU forward/backward on one training batch)')
    return Finding('SKIP', 'not probed')


def pitfall(name):
    """The judge of check ``name``: the results the loader probe found for it."""
    def judge(facts):
        found = [r for r in facts.get('pitfalls') or () if r.name == name]
        return found or _pitfall_skip(name, facts)
    judge.__name__ = 'pitfall_' + name.replace('-', '_')
    return judge


def ddp_inplace_view(facts):
    from ..pitfalls.ddp_view import judge_ddp_view
    return judge_ddp_view(facts.get('torch'), facts.get('find-unused-parameters'), False, True)


def shm_batch(facts):
    demands = facts.get('loader-demands')
    if not demands:
        return _pitfall_skip('shm-batch', facts)
    from ..pitfalls.shm import judge_shm_batch
    total = facts.get('shm')
    free = facts.get('shm-free') if 'shm' not in facts.get('assumed', ()) else total
    return judge_shm_batch(demands, total, free, facts.get('gpus-for-run') or 1)


def leftovers(facts):
    found = facts.get('leftovers')
    if found is None:
        return Finding('SKIP', 'not probed')
    from ..pitfalls.leftovers import judge_leftovers
    return judge_leftovers(found, include_managers=False)  # sharing-strategy reports the managers
