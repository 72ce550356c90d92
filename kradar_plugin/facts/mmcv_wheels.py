"""Which torch OpenMMLab publishes prebuilt mmcv 2.x wheels for (else pip compiles mmcv)."""
from .versions import major_minor, parse_version
from .result import CheckResult


# ---------------------------------------------------------------------------------------------------------
# Prebuilt mmcv 2.x wheels: the newest torch (major.minor) OpenMMLab's index (download.openmmlab.com/mmcv/
# dist/<cuXXX>/<torchX.Y>/index.html) has Linux wheels for, per mmcv release (open-mmlab/mmcv
# docs/en/_static/version.json on main, last updated by PR #3166, 2024-08-17). PyPI has only sdists of mmcv
# 2.x (environment.md section 7): with a newer torch, pip compiles mmcv from source (a compiler, and for GPU ops
# a CUDA toolkit matching torch's) or picks a wheel for another torch ("undefined symbol" in mmcv._ext).
# ---------------------------------------------------------------------------------------------------------
MMCV_WHEEL_TORCH_MAX = (('2.0.0rc1', '1.12'), ('2.0.0rc2', '1.12'), ('2.0.0rc3', '1.13'), ('2.0.0rc4', '1.13'),
                        ('2.0.0', '2.0'), ('2.0.1', '2.0'), ('2.1.0', '2.1'), ('2.2.0', '2.4'))


def mmcv_wheel_findings(mmcv, torch):
    """WARN when OpenMMLab publishes no prebuilt ``mmcv`` 2.x wheel for ``torch``'s major.minor."""
    v, t = parse_version(mmcv), parse_version(torch)
    if v is None or t is None or v < '2.0.0rc0':
        return []
    newest = dict((parse_version(m), tmax) for m, tmax in MMCV_WHEEL_TORCH_MAX).get(v)
    if newest is None or parse_version(major_minor(t)) <= newest:
        return []
    return [CheckResult('mmcv-wheel', 'WARN',
                        'OpenMMLab publishes mmcv %s wheels for torch <= %s only, not for torch %s: pip '
                        'compiles mmcv from source (a compiler, and for GPU ops a CUDA toolkit matching '
                        "torch's), or a wheel for another torch fails with \"undefined symbol\" in mmcv._ext"
                        % (mmcv, newest, torch),
                        "pip install 'torch==%s.*' and mmcv==%s -f https://download.openmmlab.com/mmcv/dist/<cuXXX>/"
                        "torch%s/index.html, or build it for this torch: MMCV_WITH_OPS=1 pip install mmcv==%s "
                        "--no-binary mmcv" % (newest, mmcv, newest, mmcv))]


# ---------------------------------------------------------------------------------------------------------
# Building mmcv from source. setuptools 82.0.0 dropped pkg_resources (torch >= 2.6's requirement setuptools>=77
# lets pip pick 84.x); every upstream mmcv sdist (1.x and 2.x, up to 2.2.0) imports it in setup.py (mmcv#3325,
# fixes unreleased), upstream mmengine <= 0.10.7 in utils/package_utils.py (``mmdet::`` config bases); the
# onedl forks do not (onedl-mmcv 2.3.6 setup.py, onedl-mmengine 0.10.12, read 2026-11-29). An mmcv sdist built
# in pip's isolated environment has no torch there and skips its ops ("Skip building ext ops due to the
# absence of torch", onedl-mmcv 2.3.6 setup.py): only --no-build-isolation with torch installed builds mmcv._ext.
# ---------------------------------------------------------------------------------------------------------
SETUPTOOLS_WITHOUT_PKG_RESOURCES = '82'
UPSTREAM_MMCV_NEEDS_PKG_RESOURCES = '2.2.0'     # the last upstream mmcv release
MMENGINE_NEEDS_PKG_RESOURCES = '0.10.7'         # the last upstream mmengine release
# trimesh 2.x imports pkg_resources at import (resources/__init__.py; 2.35.39, the pin of .venv-mm2); 3.9.43,
# 3.15.2, 3.23.5 and 5.2.0 do not (read in their wheels, 2026-11-29). mmdet3d 1.x's visualization imports it,
# and every runner mmdet3d builds imports that: its tools/train.py fails at the runner's build.
TRIMESH_WITHOUT_PKG_RESOURCES = '3.9.43'


def mmcv_build_command(dist, version, setuptools=None):
    """The pip command that compiles ``dist`` (mmcv, mmcv-full, onedl-mmcv) ``version`` with its CPU/CUDA ops
    against the torch installed here; prefixed by a setuptools pin where the sdist imports pkg_resources."""
    pin = ''
    needs = dist in ('mmcv', 'mmcv-full') and parse_version(version) is not None and \
        parse_version(version) <= UPSTREAM_MMCV_NEEDS_PKG_RESOURCES
    if needs and setuptools and parse_version(setuptools) is not None and \
            parse_version(setuptools) >= SETUPTOOLS_WITHOUT_PKG_RESOURCES:
        pin = "pip install 'setuptools<%s' && " % SETUPTOOLS_WITHOUT_PKG_RESOURCES
    return ('%sMMCV_WITH_OPS=1 pip install --no-build-isolation --no-deps --force-reinstall --no-binary %s '
            "'%s==%s' (torch installed first: the build compiles mmcv._ext against it)"
            % (pin, dist, dist, version))


def mmcv_index_serves(dist, version, torch):
    """Whether OpenMMLab's wheel index has ``dist`` ``version`` for ``torch`` (never for a fork; for mmcv 2.x
    per ``MMCV_WHEEL_TORCH_MAX``; for mmcv-full 1.x up to torch 1.13)."""
    v, t = parse_version(version), parse_version(major_minor(torch) if torch else None)
    if dist not in ('mmcv', 'mmcv-full') or v is None or t is None:
        return False
    if v < '2.0.0rc0':
        return t <= '1.13'
    newest = dict((parse_version(m), tmax) for m, tmax in MMCV_WHEEL_TORCH_MAX).get(v)
    return newest is not None and t <= newest
