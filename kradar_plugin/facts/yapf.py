"""yapf >= 0.40.2 against the mmcv/mmengine that format configs with ``FormatCode(verify=...)``."""
from .versions import parse_version
from .result import CheckResult


# yapf 0.40.2 removed FormatCode(verify=...); mmcv Config.pretty_text (cfg.dump() in tools/train.py) passes
# it until mmcv 1.7.2 (PR #2944) / mmengine 0.8.5 (PR #1365): "FormatCode() got an unexpected keyword
# argument 'verify'" at launch (open-mmlab/mmdetection#10962). mmengine <= 0.8.4 catches that TypeError and
# raises "SyntaxError: Failed to format the config file" instead (mmengine 0.8.4/0.8.5 wheels,
# mmengine/config/config.py).
YAPF_VERIFY_REMOVED = '0.40.2'
YAPF_FIXED_IN = (('mmcv-full', '1.7.2', '2.0.0'), ('mmcv', '1.7.2', '2.0.0'), ('mmengine', '0.8.5', None))


def yapf_findings(yapf, versions):
    """yapf vs the mmcv/mmengine that formats configs. ``versions``: {dist name: version or None}."""
    y = parse_version(yapf)
    if y is None or y < YAPF_VERIFY_REMOVED:
        return []
    for dist, fixed, below in YAPF_FIXED_IN:
        v = parse_version(versions.get(dist))
        if v is None or (below is not None and v >= below) or v >= fixed:
            continue  # mmcv 2.x formats configs through mmengine
        if dist == 'mmengine':
            return [CheckResult('yapf', 'FAIL', 'yapf %s with mmengine %s: Config.pretty_text/cfg.dump() raises '
                                '"SyntaxError: Failed to format the config file" (FormatCode() no longer takes '
                                "verify=)" % (yapf, versions[dist]),
                                "pip install 'mmengine>=0.8.5' (or 'yapf==0.40.1')")]
        return [CheckResult('yapf', 'FAIL', "yapf %s with %s %s: Config.pretty_text/cfg.dump() raises "
                            "\"FormatCode() got an unexpected keyword argument 'verify'\" (in a script that has not "
                            "imported kradar_plugin, which drops the argument with a warning)"
                            % (yapf, dist, versions[dist]), "pip install 'yapf==0.40.1'")]
    return []
