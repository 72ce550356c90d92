"""Judges of the OpenMMLab version checks: the ranges mmdet/mmdet3d/mmseg assert, 1.x/2.x mixes, mmdet3d vs
numpy's removed aliases, mmengine vs torch.load's default, yapf vs config formatting, and forks (onedl-mmcv &
co.: judged as the package they replace, one distribution per package)."""
from ... import facts as F
from ...facts.versions import parse_version
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
            found = F.range_findings(package, version, dep, dep_version, lo, hi, 'asserts', inclusive,
                                     facts.get('setuptools'))
            fork = providers.get('mmcv' if dep in ('mmcv', 'mmcv-full') else dep)
            if fork:
                found = [f._replace(reason='%s (%s %s is %s\'s)' % (f.reason, dep, dep_version, fork),
                                    fix=_fork_fix(fork, f.fix)) for f in found]
            if not enforced:
                found = [f._replace(status='WARN', reason=f.reason.replace('asserts', 'recommends'))
                         for f in found]
            findings.extend(found)
    if not judged:
        return Finding('SKIP', 'no mmdet/mmdet3d/mmseg with a known mmcv range installed')
    return findings


def _fork_fix(fork, fix):
    """A range fix for a fork's package: the version-gate repair keeps the fork; an install replaces it."""
    if fix.startswith(F.MMDET3D_GATE_REPAIR):
        repair, _, install = fix.partition('; or ')
        return '%s; or pip uninstall -y %s && %s' % (repair, fork, install)
    return 'pip uninstall -y %s && %s' % (fork, fix)


def openmmlab_mix(facts):
    """1.x and 2.x packages mixed. Its OK line says one generation, never "compatible": whether the versions
    accept each other is mmcv-range's verdict (the two never contradict)."""
    versions = dict((k, facts.get(k)) for k in ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d'))
    if not any(versions.values()):
        return Finding('SKIP', 'no OpenMMLab package installed')
    found = F.generation_mix_findings(versions, facts.get('torch'))
    if found:
        return found
    providers = facts.get('providers') or {}
    named = ['%s %s%s' % (k, v, ' (%s)' % providers[k] if k in providers else '') for k, v in versions.items() if v]
    generations = set(F.openmmlab_generation(k, v) for k, v in versions.items() if v) - set([None])
    return Finding('OK', '%s: one OpenMMLab generation (%s); whether their versions accept each other is the '
                         'mmcv-range check' % (', '.join(named), '/'.join('%d.x' % g for g in sorted(generations))))


def mmdet3d_numpy(facts):
    return F.numpy_alias_findings(facts['mmdet3d'], facts['numpy-effective'], facts.get('pipeline'))


def mmengine_torch(facts):
    if (facts.get('providers') or {}).get('mmengine') in WEIGHTS_ONLY_SAFE_FORKS:
        return None
    return F.mmengine_torch_load_findings(facts['mmengine'], facts['torch'])


def yapf(facts):
    return F.yapf_findings(facts['yapf'], {'mmcv-full': facts.get('mmcv-full'), 'mmcv': facts.get('mmcv'),
                                           'mmengine': facts.get('mmengine')})


def setuptools(facts):
    """setuptools >= 82 has no pkg_resources: trimesh 2.x imports it (mmdet3d's visualization, so every mmdet3d
    runner), upstream mmengine <= 0.10.7 for ``mmdet::`` config bases (the mmcv sdists that need it to build are
    the mmcv-full and mmcv-range fix lines')."""
    version = parse_version(facts['setuptools'])
    if version is None or version < F.SETUPTOOLS_WITHOUT_PKG_RESOURCES:
        return None
    findings = []
    trimesh = facts.get('trimesh')
    if trimesh and parse_version(trimesh) is not None and parse_version(trimesh) < F.TRIMESH_WITHOUT_PKG_RESOURCES:
        findings.append(Finding(
            'FAIL' if facts.get('mmdet3d') else 'WARN',
            'setuptools %s has no pkg_resources, which trimesh %s imports at import%s' % (
                facts['setuptools'], trimesh, ": mmdet3d %s's visualization imports trimesh, and every runner "
                "mmdet3d builds imports that (ModuleNotFoundError at the runner's build)" % facts['mmdet3d']
                if facts.get('mmdet3d') else ''),
            "pip install 'trimesh>=%s' (or 'setuptools<%s')" % (F.TRIMESH_WITHOUT_PKG_RESOURCES,
                                                                 F.SETUPTOOLS_WITHOUT_PKG_RESOURCES)))
    mmengine = facts.get('mmengine')
    upstream = mmengine and 'mmengine' not in (facts.get('providers') or {})
    if upstream and parse_version(mmengine) is not None and \
            parse_version(mmengine) <= F.MMENGINE_NEEDS_PKG_RESOURCES:
        findings.append(Finding(
            'WARN', "setuptools %s has no pkg_resources, which mmengine %s imports to find an installed "
                    "package's configs (utils/package_utils.py): a config whose _base_ names 'mmdet::...' or "
                    "'mmdet3d::...' fails with ModuleNotFoundError" % (facts['setuptools'], mmengine),
            "pip install 'setuptools<%s' (or onedl-mmengine, the maintained fork, which does not need it)"
            % F.SETUPTOOLS_WITHOUT_PKG_RESOURCES))
    if findings:
        return findings
    users = ['%s %s' % ((facts.get('providers') or {}).get(k, k), facts[k]) for k in ('mmengine', 'trimesh')
             if facts.get(k)]
    return Finding('OK', 'setuptools %s (no pkg_resources): nothing installed here imports it at run time%s'
                   % (facts['setuptools'], ' (%s: no)' % ', '.join(users) if users else ''))


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
