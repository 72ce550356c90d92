"""The checks, one row each, and their runner: probe (or assume) the facts, judge every check, one result each.

A row names its check, the facts it needs, its judge (doctor/rules) and the facts shown on its OK line. The
runner (``evaluate``) answers SKIP for a check whose need is missing, names what the judge found after the
check, and writes the OK line when it found nothing. The fact names are declared in fact_names.py.
"""
import collections

from . import environment, probes, rules
from ..facts.result import CheckResult
from .report import Finding

# needs: fact names, each present when its fact is truthy, or (name, SKIP reason when it is missing);
# shows: the facts named on the OK line, None for a check that prints nothing when it passes.
Check = collections.namedtuple('Check', 'name needs judge shows')

# Needs that no single fact answers, and the function that does.
DERIVED = {
    'mmcv': rules.mmcv_version,          # any mmcv: mmcv-full, mmcv (lite 1.x or 2.x), mmcv-lite
    'mmcv-full': rules.full_build,       # the mmcv with compiled ops: mmcv-full 1.x or mmcv 2.x
    'mmcv-2.x': rules.full_build_2x,     # mmcv 2.x with compiled ops, no mmcv-lite next to it
}

CHECKS = (
    Check('numba-python', (('numba', 'numba not installed (the rotated IoU uses its numpy backend)'),),
          rules.numba_python, ('numba', 'python')),
    Check('numba-numpy', ('numba',), rules.numba_numpy, ('numba', 'numpy-effective')),
    Check('numba-cuda', ('numba',), rules.numba_cuda, ('numba', 'cuda')),
    Check('numba-driver', (('driver', 'no NVIDIA driver'), 'numba'), rules.numba_driver, ('numba', 'driver', 'cuda')),
    Check('libnvvm', ('numba',), rules.libnvvm, ('libnvvm',)),
    Check('cuda-compile', (), rules.compile_test, ()),
    Check('mmcv-full', ('mmcv',), rules.mmcv_full, ('mmcv-full', 'mmcv')),
    Check('mmcv-range', (), rules.openmmlab_ranges, ('mmcv-full', 'mmcv', 'mmdet', 'mmdet3d', 'mmseg', 'mmengine')),
    Check('openmmlab-mix', (), rules.openmmlab_mix, ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d')),
    Check('package-owners', (), rules.package_owners, ()),
    Check('imports', (), rules.imports, ()),
    Check('mmdet3d-numpy', ('mmdet3d', 'numpy-effective'), rules.mmdet3d_numpy, ('mmdet3d', 'numpy-effective')),
    Check('mmcv-wheel', (('mmcv-2.x', 'no mmcv 2.x with compiled ops'), 'torch'), rules.mmcv_wheel,
          ('mmcv', 'torch')),
    Check('mmengine-torch', ('mmengine', 'torch'), rules.mmengine_torch, ('mmengine', 'torch')),
    Check('yapf', ('yapf',), rules.yapf, ('yapf', 'mmcv-full', 'mmcv', 'mmengine')),
    Check('setuptools', ('setuptools',), rules.setuptools, ('setuptools', 'mmengine', 'trimesh')),
    Check('numpy-base', (), rules.numpy_base, ('numpy', 'numpy-base', 'numpy-runtime')),
    Check('torch-gpu', ('torch',), rules.torch_gpu, ('torch', 'torch-cuda', 'gpu-cc')),
    Check('mmcv-torch', ('mmcv-full',), rules.mmcv_torch, ('mmcv-full', 'mmcv-cuda', 'torch', 'torch-cuda')),
    Check('shm', (), rules.shm, ('shm', 'workers-per-gpu')),
    Check('sharing-strategy', (), rules.sharing_strategy, ('sharing-strategy', 'nofile')),
    Check('local-rank', (('script-facts', 'no --train-script given'), 'torch'), rules.local_rank, ('torch',)),
    Check('dist-timeout', (), rules.dist_timeout, ('dist-timeout', 'eval-minutes')),
    Check('multi-node-host', (('launch', 'not a Slurm or multi-node launch (--assume launch=slurm or multi-node '
                                         'checks this host for one)'),), rules.multi_node_host, ()),
    Check('nccl-failfast', (('config', 'no --config'),), rules.nccl_failfast, ('dist-backend',)),
    Check('checkpoint-load', (), rules.checkpoint_load, ()),
    Check('box-convention', (), rules.box_convention, ()),
    Check('sampler', (), rules.pitfall('sampler'), ()),
    Check('worker-pickle', (), rules.pitfall('worker-pickle'), ()),
    Check('worker-cuda', (), rules.pitfall('worker-cuda'), ()),
    Check('import-cuda', (), rules.pitfall('import-cuda'), ()),
    Check('ddp-inplace-view', (), rules.ddp_inplace_view, ()),
    Check('unused-params', (), rules.pitfall('unused-params'), ()),
    Check('shm-batch', (), rules.shm_batch, ()),
    Check('leftovers', (), rules.leftovers, ()),
    Check('probe', (), rules.probe_errors, None),
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


def unmet(check, facts):
    """The SKIP reason of the first need of ``check`` that ``facts`` lack ('torch not installed'), else None."""
    for need in check.needs:
        name, reason = need if isinstance(need, tuple) else (need, '%s not installed' % need.replace('-effective', ''))
        if not (DERIVED[name](facts) if name in DERIVED else facts.get(name)):
            return reason
    return None


def judged(check, facts):
    """The CheckResults of one check: SKIP for a missing need, else what its judge found (nothing, a Finding,
    or a list of Findings or CheckResults) named after the check, or its OK line when it found nothing."""
    reason = unmet(check, facts)
    found = Finding('SKIP', reason) if reason else check.judge(facts)
    if not found:
        return [] if check.shows is None else [CheckResult(check.name, 'OK', ok_line(check, facts), '')]
    return [CheckResult(check.name, f.status, f.reason, f.fix)
            for f in ([found] if hasattr(found, 'status') else found)]


def evaluate(facts, checks=CHECKS):
    """Judge every check on ``facts`` (pure): a list of CheckResult, in the order of ``checks``."""
    return [result for check in checks for result in judged(check, facts)]


def collect_facts(assume=None, config=None, train_script=None, compile_test=False, quick=False, probes_=None,
                  checkpoint=None, probe_model=False, gpu_arch=None):
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
    sfacts = None
    if train_script:
        from .probes.script_facts import script_facts
        sfacts = script_facts(train_script)
    if config and quick:
        live['loader-probe-skipped'] = 'not in --quick (builds the datasets and loaders in 2 processes)'
    elif config and 'pitfalls' not in live and 'loader-probe-error' not in live:
        from .probes.loader_probe import run_loader_probe
        # a script that leaves the start method alone gets mmcv init_dist's 'spawn'
        start = 'spawn' if sfacts and not sfacts['sets-start-method'] else None
        live.update(run_loader_probe(config, probe_model=probe_model, start_method=start))
    if sfacts:
        live['script-facts'] = sfacts
        if sfacts.get('sharing-strategy'):
            live['sharing-strategy'] = sfacts['sharing-strategy']
    if checkpoint:
        from .probes.checkpoint_meta import checkpoint_facts
        live.update(checkpoint_facts(checkpoint))
    facts = environment.merge(live, assumed)
    if 'gpus-for-run' not in facts:
        facts['gpus-for-run'] = facts.get('gpus') or 1
    if compile_test or gpu_arch:
        # the architectures of the GPU nodes asked about: --gpu-arch, else this (or the assumed) GPU's, else
        # DEFAULT_ARCHS; a bad --gpu-arch raises ValueError before anything runs
        from ..facts.cuda_compile import DEFAULT_ARCHS, arch_of_cc, parse_archs
        archs = parse_archs(gpu_arch) if gpu_arch else [arch_of_cc(cc) for cc in facts.get('gpu-cc') or ()]
        facts['gpu-arch'] = archs or list(DEFAULT_ARCHS)
        facts['compile-test'] = _compile(facts, quick)
        if isinstance(facts['compile-test'], dict):
            facts['compile-test']['archs-from'] = '--gpu-arch' if gpu_arch else 'gpu' if archs else 'default'
            toolkit = facts['compile-test'].get('toolkit') or {}
            if toolkit.get('version') and 'cuda' not in facts['assumed']:
                # the toolkit whose libNVVM numba really loaded, not the first folder the file probe found
                facts['cuda'], facts['cuda-source'] = toolkit['version'], toolkit.get('root')
                facts['libnvvm'] = toolkit.get('libnvvm') or facts.get('libnvvm')
    return facts


def _compile(facts, quick):
    if quick:
        return 'skip', 'not run in quick mode'
    if 'numba' in facts.get('assumed', ()):
        return 'skip', 'numba is assumed, not installed here: nothing to compile with'
    if not facts.get('numba'):
        return 'skip', 'numba not installed'
    from .probes.compile_test import run_compile_test
    return run_compile_test(facts['gpu-arch'])


def run_checks(assume=None, config=None, train_script=None, compile_test=False, quick=False, probes=None,
               checkpoint=None, probe_model=False, gpu_arch=None):
    """Run every check: a list of CheckResult(name, status, reason, fix), status OK/SKIP/WARN/FAIL.

    assume: 'k=v,...' or a dict of planned versions (not imported); config: an mmcv config path;
    train_script: a training script to parse; compile_test: compile mmdet3d's and the plugin's rotated-IoU
    kernels with NVIDIA's compilers in a subprocess; gpu_arch: 'sm_80,sm_90', the GPUs to compile for (implies
    compile_test);
    quick: no subprocess and no new heavy import; probes: {fact: value} replacing live probe results (tests
    inject /dev/shm size, GPUs, driver this way); checkpoint: read its meta's mmdet3d (without torch);
    probe_model: with a config, one CPU forward/backward of the model (vs find_unused_parameters)."""
    return evaluate(collect_facts(assume, config, train_script, compile_test, quick, probes, checkpoint,
                                  probe_model, gpu_arch))
