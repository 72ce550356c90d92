"""Judges of the OpenMMLab version checks: the ranges mmdet/mmdet3d/mmseg assert, 1.x/2.x mixes, mmdet3d vs
numpy's removed aliases, mmengine vs torch.load's default, yapf vs config formatting, and forks (onedl-mmcv &
co.: judged as the package they replace, one distribution per package)."""
from ... import facts as F
from ..report import Finding
from .mmcv import mmcv_version

#: forks whose every release already loads checkpoints under torch >= 2.6's weights_only default:
#: onedl-mmengine's runner/checkpoint.py has ``_safe_torch_load`` from its first release on (read in the
#: sdists of 0.10.8, 0.10.9, 0.10.10 and the wheel of 0.10.12 on PyPI, 2026-11-27)
WEIGHTS_ONLY_SAFE_FORKS = ('onedl-mmengine',)


def openmmlab_ranges(facts):
    """mmcv (and mmdet/mmseg/mmengine) within what the installed mmdet/mmdet3d/mmseg assert at import."""
    findings, judged = [], []
    assumed = facts.get('assumed', ())
    installed = facts.get('installed-ranges') or {}
    for package in ('mmdet', 'mmdet3d', 'mmseg'):
        version = facts.get(package)
        if not version:
            continue
        providers = facts.get('providers') or {}
        if package not in assumed and package in installed:
            ranges = installed[package]
        elif package in providers:      # a fork's version numbers are not upstream's: no table for them
            continue
        else:
            ranges = dict((dep, (lo, hi, inclusive, True))
                          for dep, (lo, hi, inclusive) in F.openmmlab_asserts(package, version).items())
        if not ranges:
            continue
        judged.append('%s %s' % (package, version))
        for dep, (lo, hi, inclusive, enforced) in sorted(ranges.items()):
            if dep in ('mmcv', 'mmcv-full'):
                dep_version = mmcv_version(facts)
                dep = 'mmcv' if F.openmmlab_generation('mmcv', lo) == 2 else 'mmcv-full'
            else:
                dep_version = facts.get(dep)
            found = F.range_findings(package, version, dep, dep_version, lo, hi, 'asserts', inclusive)
            fork = providers.get('mmcv' if dep in ('mmcv', 'mmcv-full') else dep)
            if fork:
                found = [f._replace(reason='%s (%s %s is %s\'s)' % (f.reason, dep, dep_version, fork),
                                    fix='pip uninstall -y %s && %s' % (fork, f.fix)) for f in found]
            if not enforced:
                found = [f._replace(status='WARN', reason=f.reason.replace('asserts', 'recommends'))
                         for f in found]
            findings.extend(found)
    if not judged:
        return Finding('SKIP', 'no mmdet/mmdet3d/mmseg with a known mmcv range installed')
    return findings


def openmmlab_mix(facts):
    versions = dict((k, facts.get(k)) for k in ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d'))
    if not any(versions.values()):
        return Finding('SKIP', 'no OpenMMLab package installed')
    return F.generation_mix_findings(versions)


def mmdet3d_numpy(facts):
    return F.numpy_alias_findings(facts['mmdet3d'], facts['numpy-effective'], facts.get('pipeline'))


def mmengine_torch(facts):
    if (facts.get('providers') or {}).get('mmengine') in WEIGHTS_ONLY_SAFE_FORKS:
        return None
    return F.mmengine_torch_load_findings(facts['mmengine'], facts['torch'])


def yapf(facts):
    return F.yapf_findings(facts['yapf'], {'mmcv-full': facts.get('mmcv-full'), 'mmcv': facts.get('mmcv'),
                                           'mmengine': facts.get('mmengine')})


def package_owners(facts):
    """One distribution per OpenMMLab package: a fork next to the package it replaces (or to another fork)
    overwrote its files; forks alone are named with the package they replace."""
    owners = facts.get('package-owners') or {}
    providers = facts.get('providers') or {}
    if not owners and not providers:
        return Finding('SKIP', 'no fork of an OpenMMLab package installed')
    findings = []
    for package, dists in sorted(owners.items()):
        keep = dists[0].split(' ')
        findings.append(Finding(
            'FAIL',
            'the %s package is installed by %s: each overwrote the other\'s files (import %s gives a mix of '
            'them, and uninstalling one breaks the other)' % (package, ' and '.join(dists), package),
            'pip uninstall -y %s && pip install %s==%s' % (' '.join(d.split(' ')[0] for d in dists), keep[0],
                                                           keep[1])))
    return findings or Finding('OK', '%s: one distribution per package, judged as %s' % (
        ', '.join('%s %s (%s)' % (f, facts.get(f), providers[f]) for f in sorted(providers)),
        ', '.join(sorted(providers))))
