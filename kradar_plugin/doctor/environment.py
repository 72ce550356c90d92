"""The facts the rules judge: live probes, with ``--assume k=v,...`` replacing what the user plans.

Assuming any key of a group replaces the whole group's live facts (assuming ``mmcv-full=1.4.0`` means "no
lite mmcv next to it", assuming ``numpy=1.19.5`` means "not the numpy-base of this machine"); every other
fact is still read from the current environment. Assumed packages are never imported.
"""
import re

from ..facts.versions import cuda_from_local_tag, normalize_name, parse_version

# key -> help text. Versions unless said otherwise.
ASSUMABLE = {
    'python': 'CPython version', 'numba': 'numba', 'numpy': 'numpy (conda: the numpy record)',
    'numpy-base': 'conda numpy-base (what actually imports)', 'cuda': 'CUDA toolkit/NVVM numba finds',
    'libnvvm': 'yes/no: numba finds libNVVM', 'driver': 'NVIDIA driver, e.g. 535.104.05',
    'gpus': 'number of GPUs per node', 'gpu-cc': 'GPU compute capability, e.g. 8.6 (several: 8.6/9.0)',
    'torch': 'torch (a +cu113 tag sets torch-cuda)', 'torch-cuda': 'CUDA torch was built with',
    'mmcv': 'mmcv: lite 1.x, or 2.x (the full build)', 'mmcv-full': 'mmcv-full',
    'mmcv-lite': 'mmcv-lite (2.x, no compiled ops)', 'mmcv-ext': 'ok, or the import error of mmcv._ext',
    'mmcv-cuda': 'CUDA mmcv-full was compiled with', 'mmcv-torch': 'torch mmcv-full was compiled with',
    'mmdet': 'mmdet', 'mmdet3d': 'mmdet3d', 'mmseg': 'mmseg', 'mmengine': 'mmengine', 'yapf': 'yapf',
    'shm': '/dev/shm size (bytes or 64M, 8G)', 'sharing-strategy': 'file_descriptor or file_system',
    'nofile': 'ulimit -n', 'workers-per-gpu': 'DataLoader workers per GPU',
    'eval-minutes': 'expected duration of one (rank-0) evaluation', 'dist-timeout': 'seconds',
    'checkpoint-mmdet3d': "mmdet3d version recorded in a checkpoint's meta (instead of --checkpoint)",
    'pipeline': 'transform types of the config to run, e.g. ObjectSample/ObjectRangeFilter',
    'launch': 'slurm or multi-node: the launch to judge this host for (found by itself inside a job)',
}
ALIASES = {'mmcv_full': 'mmcv-full', 'numpy_base': 'numpy-base', 'cudatoolkit': 'cuda', 'cuda-toolkit': 'cuda',
           'nvidia-driver': 'driver', 'cc': 'gpu-cc', 'workers_per_gpu': 'workers-per-gpu',
           'mmsegmentation': 'mmseg', 'mmdetection': 'mmdet', 'mmdetection3d': 'mmdet3d',
           'mmcv_lite': 'mmcv-lite', 'checkpoint_mmdet3d': 'checkpoint-mmdet3d'}
# Forks of the OpenMMLab packages (distribution -> the package fact it replaces): ``--assume onedl-mmcv=2.3.6``
# judges mmcv 2.3.6, named as onedl-mmcv (see probes/packages.py OPENMMLAB_PACKAGES).
FORKS = {'onedl-mmcv': 'mmcv', 'onedl-mmengine': 'mmengine', 'onedl-mmdetection': 'mmdet',
         'onedl-mmdetection3d': 'mmdet3d', 'onedl-mmsegmentation': 'mmseg'}
# Assuming one key replaces these live facts too (they describe the same installation).
GROUPS = (
    ('numpy', 'numpy-base', 'numpy-runtime'),
    ('mmcv', 'mmcv-full', 'mmcv-lite', 'mmcv-ext', 'mmcv-ext-file', 'mmcv-cuda', 'mmcv-torch'),
    ('torch', 'torch-runtime', 'torch-cuda', 'torch-arch', 'torch-import'),
    ('numba', 'numba-runtime', 'numba-import'),
    ('cuda', 'cuda-source', 'libnvvm'),
    ('driver', 'gpus', 'gpu-cc', 'torch-cuda-available'),
)
# The live import probe (import mmdet3d.models, ...) says nothing about a planned environment: assuming any of
# these drops it.
IMPORT_AFFECTING = ('python', 'numpy', 'numpy-base', 'torch', 'torch-cuda', 'numba', 'mmcv', 'mmcv-full',
                    'mmcv-lite', 'mmcv-ext', 'mmdet', 'mmdet3d', 'mmseg', 'mmengine')
IMPORT_FACTS = ('import-errors', 'imports-checked')
# Probe groups that an assumption makes unnecessary (see probes.gather(skip=...)).
PROBE_SKIP = {'numpy': 'numpy', 'numpy-base': 'numpy', 'torch': 'torch', 'torch-cuda': 'torch',
              'mmcv': 'mmcv', 'mmcv-full': 'mmcv', 'mmcv-lite': 'mmcv', 'numba': 'numba', 'cuda': 'cuda'}
_SIZE_RE = re.compile(r'^\s*([\d.]+)\s*([kmgt]?)i?b?\s*$', re.I)


def parse_size(text):
    """'64M' -> 67108864, '8G' -> 8 GiB, '1048576' -> 1048576 (binary units)."""
    match = _SIZE_RE.match(str(text))
    if not match:
        raise ValueError('--assume shm: cannot read size %r (use bytes or 64M, 8G)' % (text,))
    return int(float(match.group(1)) * 1024 ** ' kmgt'.index(match.group(2).lower() or ' '))


def parse_assume(text):
    """'python=3.7.16,numba=0.48.0' (or a dict) -> {canonical key: value}; ValueError names a bad item."""
    if not text:
        return {}
    items = text.items() if isinstance(text, dict) else \
        [tuple(p.split('=', 1)) if '=' in p else (p, None) for p in text.split(',') if p.strip()]
    out, forks = {}, {}
    for key, value in items:
        raw = key = key.strip()
        key = normalize_name(key)
        fork = key if key in FORKS else None
        key = FORKS.get(key, ALIASES.get(key, ALIASES.get(raw, key)))
        if key not in ASSUMABLE:
            raise ValueError('--assume: unknown key %r; known keys: %s' % (raw, ', '.join(sorted(ASSUMABLE))))
        if value is None or str(value).strip() == '':
            raise ValueError('--assume: %r needs a value (%s=...)' % (raw, raw))
        value = str(value).strip()
        if key == 'shm':
            value = parse_size(value)
        elif key in ('gpus', 'nofile', 'workers-per-gpu'):
            value = int(value)
        elif key in ('eval-minutes', 'dist-timeout'):
            value = float(value)
        elif key in ('gpu-cc', 'pipeline'):
            value = value.split('/')
        elif key == 'mmcv-cuda' and value.lower() in ('cpu', 'none', 'not available'):
            value = 'not available'  # what mmcv.ops.get_compiling_cuda_version() says for a CPU build
        elif key == 'libnvvm':
            value = value if value.lower() not in ('no', 'none', 'false', '0') else None
        elif key == 'launch' and value not in ('slurm', 'multi-node'):
            raise ValueError('--assume: launch=%r: use slurm or multi-node' % (value,))
        elif key not in ('mmcv-ext', 'sharing-strategy', 'pipeline', 'launch') and parse_version(value) is None:
            raise ValueError('--assume: %s=%r is not a version' % (raw, value))
        if fork and key == 'mmcv' and parse_version(value) < '2.0.0rc0':
            key = 'mmcv-full'            # a 1.x mmcv fork is the full build
        if fork:
            forks[key] = fork
        out[key] = value
    if forks:
        out['providers'] = forks
    return out


def probe_skips(assumed):
    skips = set(PROBE_SKIP[k] for k in assumed if k in PROBE_SKIP)
    if any(k in IMPORT_AFFECTING for k in assumed):
        skips.add('imports')
    return skips


def merge(live, assumed):
    """Live facts with ``assumed`` applied group-wise; adds the derived facts the rules read."""
    facts = dict(live)
    assumed = dict(assumed)
    forks = assumed.pop('providers', {})
    for member in [m for group in GROUPS if set(group) & set(assumed) for m in group]:
        facts.pop(member, None)
    # an assumed package replaces the live one's provider and owners (mmcv-full's group: the mmcv package)
    replaced = set(assumed) | (set(('mmcv', 'mmcv-full', 'mmcv-lite')) if set(assumed) & set(GROUPS[1]) else set())
    providers = dict((k, v) for k, v in (facts.get('providers') or {}).items() if k not in replaced)
    providers.update(forks)
    facts['providers'] = providers
    facts['package-owners'] = dict(
        (k, v) for k, v in (facts.get('package-owners') or {}).items()
        if k not in replaced and not (k == 'mmcv' and replaced & set(GROUPS[1])))
    if any(k in IMPORT_AFFECTING for k in assumed):
        for key in IMPORT_FACTS:
            facts.pop(key, None)
        facts['imports-skipped'] = 'assumed versions are judged, not the installed packages'
    facts.update(assumed)
    facts['assumed'] = sorted(assumed)
    return derive(facts)


def derive(facts):
    """Fill derived facts: effective numpy, torch's CUDA, mmcv flavour, GPU presence."""
    # The numpy that imports: the running one, else conda's numpy-base, else the declared numpy.
    facts['numpy-effective'] = facts.get('numpy-runtime') or facts.get('numpy-base') or facts.get('numpy')
    if facts.get('torch') and not facts.get('torch-cuda'):
        tag = cuda_from_local_tag(facts['torch'])
        if tag:
            facts['torch-cuda'] = tag
        elif 'torch' in facts.get('assumed', ()) and facts.get('cuda'):
            facts['torch-cuda'] = facts['cuda']  # a planned torch is installed for the planned CUDA
    if 'cuda' in facts.get('assumed', ()) and 'libnvvm' not in facts.get('assumed', ()):
        facts['libnvvm'] = 'assumed with CUDA %s' % facts['cuda']
    if 'mmcv-full' in facts.get('assumed', ()) and 'mmcv-ext' not in facts:
        facts['mmcv-ext'] = 'ok'
    if facts.get('gpu-cc') and not facts.get('gpus'):
        facts['gpus'] = len(facts['gpu-cc'])
    return facts
