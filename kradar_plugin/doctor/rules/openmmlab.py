"""Rules of the OpenMMLab version checks: the ranges mmdet/mmdet3d/mmseg assert, 1.x/2.x mixes, mmdet3d vs
numpy's removed aliases, mmengine vs torch.load's default, yapf vs config formatting."""
from ...compat import facts as F
from ..result import skip
from .mmcv import is_2x, mmcv_version


def openmmlab_ranges(facts):
    """mmcv (and mmdet/mmseg/mmengine) within what the installed mmdet/mmdet3d/mmseg assert at import."""
    findings, judged = [], []
    assumed = facts.get('assumed', ())
    installed = facts.get('installed-ranges') or {}
    for package in ('mmdet', 'mmdet3d', 'mmseg'):
        version = facts.get(package)
        if not version:
            continue
        if package not in assumed and package in installed:
            ranges = installed[package]
        else:
            ranges = dict((dep, (lo, hi, inclusive, True))
                          for dep, (lo, hi, inclusive) in F.openmmlab_asserts(package, version).items())
        if not ranges:
            continue
        judged.append('%s %s' % (package, version))
        for dep, (lo, hi, inclusive, enforced) in sorted(ranges.items()):
            if dep in ('mmcv', 'mmcv-full'):
                dep_version = mmcv_version(facts)
                dep = 'mmcv' if is_2x(lo) else 'mmcv-full'
            else:
                dep_version = facts.get(dep)
            found = F.range_findings(package, version, dep, dep_version, lo, hi, 'asserts', inclusive)
            if not enforced:
                found = [f._replace(status='WARN', reason=f.reason.replace('asserts', 'recommends'))
                         for f in found]
            findings.extend(found)
    if not judged:
        return skip('mmcv-range', 'no mmdet/mmdet3d/mmseg with a known mmcv range installed')
    return findings


def openmmlab_mix(facts):
    versions = dict((k, facts.get(k)) for k in ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d'))
    if not any(versions.values()):
        return skip('openmmlab-mix', 'no OpenMMLab package installed')
    return F.generation_mix_findings(versions)


def mmdet3d_numpy(facts):
    if not facts.get('mmdet3d'):
        return skip('mmdet3d-numpy', 'mmdet3d not installed')
    numpy = facts.get('numpy-effective')
    if not numpy:
        return skip('mmdet3d-numpy', 'numpy not installed')
    return F.numpy_alias_findings(facts['mmdet3d'], numpy, facts.get('pipeline'))


def mmengine_torch(facts):
    if not facts.get('mmengine'):
        return skip('mmengine-torch', 'mmengine not installed')
    if not facts.get('torch'):
        return skip('mmengine-torch', 'torch not installed')
    return F.mmengine_torch_load_findings(facts['mmengine'], facts['torch'])


def yapf(facts):
    if not facts.get('yapf'):
        return skip('yapf', 'yapf not installed')
    return F.yapf_findings(facts['yapf'], {'mmcv-full': facts.get('mmcv-full'), 'mmcv': facts.get('mmcv'),
                                           'mmengine': facts.get('mmengine')})
