"""The list of checks and ``run_checks``: probe (or assume) the facts, apply every rule, one result each.

A check is (name, rule, facts shown on its OK line). Rules live in the rules package (one module per check
family) and return CheckResults named after their check; the version facts they apply live in
kradar_plugin.facts; the fact names are declared in fact_names.py.
"""
import collections

from . import environment, probes, rules
from .result import CheckResult

Check = collections.namedtuple('Check', 'name rule shows')

CHECKS = (
    Check('numba-python', rules.numba_python, ('numba', 'python')),
    Check('numba-numpy', rules.numba_numpy, ('numba', 'numpy-effective')),
    Check('numba-cuda', rules.numba_cuda, ('numba', 'cuda')),
    Check('numba-driver', rules.numba_driver, ('numba', 'driver', 'cuda')),
    Check('libnvvm', rules.libnvvm, ('libnvvm',)),
    Check('cuda-compile', rules.compile_test, ()),
    Check('mmcv-full', rules.mmcv_full, ('mmcv-full', 'mmcv')),
    Check('mmcv-range', rules.openmmlab_ranges, ('mmcv-full', 'mmcv', 'mmdet', 'mmdet3d', 'mmseg', 'mmengine')),
    Check('openmmlab-mix', rules.openmmlab_mix, ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d')),
    Check('package-owners', rules.package_owners, ()),
    Check('imports', rules.imports, ()),
    Check('mmdet3d-numpy', rules.mmdet3d_numpy, ('mmdet3d', 'numpy-effective')),
    Check('mmcv-wheel', rules.mmcv_wheel, ('mmcv', 'torch')),
    Check('mmengine-torch', rules.mmengine_torch, ('mmengine', 'torch')),
    Check('yapf', rules.yapf, ('yapf', 'mmcv-full', 'mmcv', 'mmengine')),
    Check('numpy-base', rules.numpy_base, ('numpy', 'numpy-base', 'numpy-runtime')),
    Check('torch-gpu', rules.torch_gpu, ('torch', 'torch-cuda', 'gpu-cc')),
    Check('mmcv-torch', rules.mmcv_torch, ('mmcv-full', 'mmcv-cuda', 'torch', 'torch-cuda')),
    Check('shm', rules.shm, ('shm', 'workers-per-gpu')),
    Check('sharing-strategy', rules.sharing_strategy, ('sharing-strategy', 'nofile')),
    Check('local-rank', rules.local_rank, ('torch',)),
    Check('dist-timeout', rules.dist_timeout, ('dist-timeout', 'eval-minutes')),
    Check('nccl-failfast', rules.nccl_failfast, ('dist-backend',)),
    Check('box-convention', rules.box_convention, ()),
    Check('sampler', rules.pitfall('sampler'), ()),
    Check('worker-pickle', rules.pitfall('worker-pickle'), ()),
    Check('worker-cuda', rules.pitfall('worker-cuda'), ()),
    Check('import-cuda', rules.pitfall('import-cuda'), ()),
    Check('ddp-inplace-view', rules.ddp_inplace_view, ()),
    Check('unused-params', rules.pitfall('unused-params'), ()),
    Check('shm-batch', rules.shm_batch, ()),
    Check('leftovers', rules.leftovers, ()),
    Check('probe', rules.probe_errors, ()),
)


def _show(key, value, providers=None):
    if providers and key in providers:
        return '%s %s (%s)' % (key, value, providers[key])     # a fork, e.g. 'mmcv 2.3.6 (onedl-mmcv)'
    if key == 'shm':
        return '/dev/shm %d MiB' % (value // 2 ** 20)
    if key == 'gpu-cc':
        return 'GPU cc %s' % '/'.join(value)
    if key == 'libnvvm':
        return 'libNVVM %s' % value
    if key == 'dist-timeout':
        return 'timeout %g s' % value
    return '%s %s' % (key.replace('-effective', ''), value)


def ok_line(check, facts):
    providers = facts.get('providers')
    shown = [_show(k, facts[k], providers) for k in check.shows if facts.get(k) not in (None, '', [])]
    return ', '.join(shown) + ': compatible' if shown else 'OK'


def evaluate(facts, checks=CHECKS):
    """Apply every check's rule to ``facts`` (pure): a list of CheckResult, an OK line for a rule that found
    nothing."""
    results = []
    for check in checks:
        found = check.rule(facts)
        if not found:
            results.append(CheckResult(check.name, 'OK', ok_line(check, facts), ''))
        results.extend(found)
    return [r for r in results if not (r.name == 'probe' and r.status == 'OK')]


def collect_facts(assume=None, config=None, train_script=None, compile_test=False, quick=False, probes_=None,
                  checkpoint=None, probe_model=False):
    """The facts to judge: live probes (``probes_`` overrides individual live facts, for tests), then the
    config's, script's and checkpoint's facts (with a config and not ``quick``: the loaders built in a
    2-process gloo group, see loader_probe), then ``assume``."""
    assumed = environment.parse_assume(assume)
    skip = environment.probe_skips(assumed)
    live = probes.gather(quick=quick, skip=skip)
    live.update(probes_ or {})
    if config:
        from .probes.config_facts import config_facts
        cfg = config_facts(config)
        if 'gpus' in cfg:
            cfg['gpus-for-run'] = cfg.pop('gpus')
        live.update(cfg)
        if quick:
            live['loader-probe-skipped'] = 'not in --quick (builds the datasets and loaders in 2 processes)'
        elif 'pitfalls' not in live and 'loader-probe-error' not in live:
            from .probes.loader_probe import run_loader_probe
            start = None
            if train_script:  # a script that leaves the start method alone gets mmcv init_dist's 'spawn'
                from .probes.script_facts import script_facts
                start = None if script_facts(train_script).get('sets-start-method') else 'spawn'
            live.update(run_loader_probe(config, probe_model=probe_model, start_method=start))
    if train_script:
        from .probes.script_facts import script_facts
        sfacts = script_facts(train_script)
        live['script-facts'] = sfacts
        if sfacts.get('sharing-strategy'):
            live['sharing-strategy'] = sfacts['sharing-strategy']
    if checkpoint:
        from .probes.checkpoint_meta import checkpoint_facts
        live.update(checkpoint_facts(checkpoint))
    facts = environment.merge(live, assumed)
    if 'gpus-for-run' not in facts:
        facts['gpus-for-run'] = facts.get('gpus') or 1
    if compile_test:
        facts['compile-test'] = _compile(facts, quick)
    return facts


def _compile(facts, quick):
    if quick:
        return 'skip', 'not run in quick mode'
    if 'numba' in facts.get('assumed', ()):
        return 'skip', 'numba is assumed, not installed here: nothing to compile with'
    if not facts.get('numba'):
        return 'skip', 'numba not installed'
    if not rules.has_gpu(facts) and not facts.get('libnvvm'):
        return 'skip', 'no GPU and no libNVVM here: numba.cuda is not used'
    from .probes.compile_test import run_compile_test
    return run_compile_test()


def run_checks(assume=None, config=None, train_script=None, compile_test=False, quick=False, probes=None,
               checkpoint=None, probe_model=False):
    """Run every check: a list of CheckResult(name, status, reason, fix), status OK/SKIP/WARN/FAIL.

    assume: 'k=v,...' or a dict of planned versions (judged without importing them); config: an mmcv config
    path; train_script: a training script to parse; compile_test: compile a numba.cuda kernel in a subprocess;
    quick: no subprocess and no new heavy import; probes: {fact: value} replacing live probe results
    (tests inject /dev/shm size, GPUs, driver this way); checkpoint: a checkpoint whose meta names the mmdet3d
    it was trained with (read without torch); probe_model: with a config, also one CPU forward/backward of
    the model on one training batch (parameters without gradient vs find_unused_parameters)."""
    return evaluate(collect_facts(assume, config, train_script, compile_test, quick, probes, checkpoint,
                                  probe_model))
