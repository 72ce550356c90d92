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
