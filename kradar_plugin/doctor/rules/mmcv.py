"""Judges of the mmcv build checks: which mmcv flavour is installed (mmcv-full, lite mmcv, mmcv-lite) and
whether its compiled ops exist and fit the installed torch (mmcv-full, mmcv-wheel, mmcv-torch)."""
from ... import facts as F
from ...facts.versions import major_minor, parse_version
from ..report import Finding
from .gpu import has_gpu


def _lite_mmcv(facts):
    """The lite mmcv 1.x (distribution 'mmcv' < 2.0; mmcv 2.x under that name is the full build)."""
    v = parse_version(facts.get('mmcv'))
    return v is not None and v < '2.0'


def _ops_users(facts):
    """Installed packages of the OpenMMLab 2.x generation that need mmcv's compiled ops (mmcv._ext)."""
    return ['%s %s' % (p, facts[p]) for p in ('mmdet', 'mmdet3d', 'mmseg')
            if F.openmmlab_generation(p, facts.get(p)) == 2]


def _mmcv_wheel_hint(version, facts):
    return _reinstall('mmcv', version, facts)


def mmcv_full(facts):
    full, mmcv, lite2 = facts.get('mmcv-full'), facts.get('mmcv'), facts.get('mmcv-lite')
    providers = facts.get('providers') or {}    # a fork (onedl-mmcv) is named as installed, judged as mmcv
    installed = ['%s %s' % (providers.get(n, n), v) for n, v in (('mmcv', mmcv), ('mmcv-full', full),
                                                                  ('mmcv-lite', lite2)) if v]
    if len(installed) > 1:
        keep = "'mmcv-full==%s'" % full if full else "'mmcv==%s'" % mmcv
        return Finding('FAIL', '%s %s are installed in one environment (they share the mmcv package: '
                               'ModuleNotFoundError)' % ('both' if len(installed) == 2 else 'all of',
                                                         ' and '.join(installed)),
                       'pip uninstall -y mmcv mmcv-full mmcv-lite && pip install %s' % keep)
    if _lite_mmcv(facts):
        return Finding('FAIL', "mmcv %s (lite, no compiled ops) is installed instead of mmcv-full: No module named "
                               "'mmcv._ext'" % facts['mmcv'],
                       'pip uninstall -y mmcv && mim install mmcv-full (or pip install mmcv-full -f '
                       'https://download.openmmlab.com/mmcv/dist/<cuXXX>/<torchX.Y.0>/index.html)')
    if lite2:
        users = _ops_users(facts)
        if not users:
            return Finding('OK', 'mmcv-lite %s (no compiled ops); nothing installed here needs mmcv.ops' % lite2)
        return Finding('FAIL', "mmcv-lite %s has no compiled ops (No module named 'mmcv._ext'): %s models, "
                               "datasets and evaluation fail to import" % (lite2, ', '.join(users)),
                       'pip uninstall -y mmcv-lite && ' + _mmcv_wheel_hint(lite2, facts))
    name, version = ('mmcv-full', full) if full else ('mmcv', mmcv)
    name = providers.get(name, name)
    ext = facts.get('mmcv-ext')
    if facts.get('mmcv-ext-file') is False:
        return Finding('FAIL', "%s %s is installed without its compiled ops (no mmcv/_ext*.so: No module named "
                               "'mmcv._ext'): its sdist was built where torch was not importable, e.g. in pip's "
                               "isolated build environment (\"Skip building ext ops due to the absence of "
                               "torch\")" % (name, version), _reinstall(name, version, facts))
    if ext and ext != 'ok':
        hint = ' (compiled against another torch)' if 'undefined symbol' in ext else ''
        return Finding('FAIL', 'import mmcv._ext fails%s: %s' % (hint, ext), _reinstall(name, version, facts))
    return None


def _reinstall(name, version, facts):
    """The fix line that gives ``name`` ``version`` ops built for the installed torch: OpenMMLab's wheel index
    where it serves that torch, else the build from source (no index or version that does not exist)."""
    torch = facts.get('torch')
    build = F.mmcv_build_command(name, version, facts.get('setuptools'))
    if F.mmcv_index_serves(name, version, torch):
        return ('pip install --force-reinstall --no-deps %s==%s -f https://download.openmmlab.com/mmcv/dist/%s/'
                'torch%s.0/index.html, or compile it: %s' % (name, version, _cu_tag(facts.get('torch-cuda')),
                                                               major_minor(torch), build))
    return build


def _dist(facts):
    """The distribution of the mmcv with compiled ops (a fork named as such)."""
    name = 'mmcv-full' if facts.get('mmcv-full') else 'mmcv'
    return (facts.get('providers') or {}).get(name, name)


def _cu_tag(cuda):
    if not cuda or cuda == 'cpu':
        return 'cpu'
    v = parse_version(cuda)
    return 'cu%d%d' % (v.part(0), v.part(1)) if v is not None else 'cuXXX'


def mmcv_version(facts):
    """The mmcv the OpenMMLab asserts see (mmcv.__version__): mmcv-full 1.x, mmcv 2.x, lite mmcv or mmcv-lite."""
    return facts.get('mmcv-full') or facts.get('mmcv') or facts.get('mmcv-lite')


def full_build(facts):
    """The mmcv with compiled ops: mmcv-full 1.x or mmcv 2.x (None for a lite mmcv or none)."""
    return facts.get('mmcv-full') or (facts.get('mmcv') if not _lite_mmcv(facts) else None)


def full_build_2x(facts):
    """The mmcv 2.x with compiled ops (mmcv, with no mmcv-lite next to it), else None."""
    mmcv = facts.get('mmcv')
    return mmcv if F.openmmlab_generation('mmcv', mmcv) == 2 and not facts.get('mmcv-lite') else None


def mmcv_wheel(facts):
    mmcv = full_build_2x(facts)
    assumed = facts.get('assumed', ())
    if 'mmcv' not in assumed and 'torch' not in assumed:
        ext = facts.get('mmcv-ext')
        if ext == 'ok':
            return Finding('OK', 'mmcv %s with torch %s: mmcv._ext imports (built for this torch)'
                           % (mmcv, facts['torch']))
        if ext:
            return Finding('SKIP', 'mmcv._ext does not import (see mmcv-full)')
        return Finding('SKIP', 'mmcv._ext not probed (quick mode)')
    return F.mmcv_wheel_findings(mmcv, facts['torch'])


def mmcv_torch(facts):
    full = full_build(facts)
    findings = []
    mmcv_torch_v, torch_v = facts.get('mmcv-torch'), facts.get('torch')
    if mmcv_torch_v and torch_v and major_minor(mmcv_torch_v) != major_minor(torch_v):
        findings.append(Finding('FAIL', 'mmcv-full %s was compiled for torch %s but torch %s is installed '
                                        '(undefined symbol in mmcv._ext)' % (full, mmcv_torch_v, torch_v),
                                _reinstall(_dist(facts), full, facts)))
    mmcv_cuda, torch_cuda = facts.get('mmcv-cuda'), facts.get('torch-cuda')
    if mmcv_cuda and torch_cuda and torch_cuda != 'cpu':
        if mmcv_cuda == 'not available':
            if has_gpu(facts):
                findings.append(Finding('WARN', 'mmcv-full %s was compiled without CUDA: mmcv.ops on GPU tensors '
                                                'fail' % full,
                                        'MMCV_WITH_OPS=1 FORCE_CUDA=1 pip install mmcv-full==%s --no-binary '
                                        'mmcv-full' % full))
        elif parse_version(mmcv_cuda) is not None and \
                parse_version(mmcv_cuda).part(0) != parse_version(torch_cuda).part(0):
            findings.append(Finding('FAIL', 'mmcv-full %s was compiled with CUDA %s but torch uses CUDA %s'
                                    % (full, mmcv_cuda, torch_cuda),
                                    _reinstall(_dist(facts), full, facts)))
    return findings
