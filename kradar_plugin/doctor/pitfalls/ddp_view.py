"""Check ``ddp-inplace-view``: torch 1.10.x runs DDP outputs through ``_DDPSink``, which returns views with
``find_unused_parameters=True`` (or ``static_graph``): an in-place op on one fails with "Output 0 of ... is a
view and is being modified inplace" (pytorch#61982; fixed in 1.11 by pytorch#66015)."""
import re

from ...facts.result import CheckResult


def judge_ddp_view(torch_version, find_unused=None, static_graph=False, distributed=True):
    """torch 1.10.x: DDP runs outputs through _DDPSink (views) with find_unused_parameters=True or
    static_graph; an in-place op on them raises. ``find_unused`` None: not known (no config)."""
    if not torch_version:
        return CheckResult('ddp-inplace-view', 'SKIP', 'torch not installed', '')
    match = re.match(r'(\d+)\.(\d+)', str(torch_version))
    if not match or (int(match.group(1)), int(match.group(2))) != (1, 10):
        return CheckResult('ddp-inplace-view', 'OK', 'torch %s: DDP outputs can be modified in place (the 1.10 '
                           '_DDPSink view error is fixed since 1.11)' % torch_version, '')
    if not distributed:
        return CheckResult('ddp-inplace-view', 'OK', 'torch %s, single process: no DDP' % torch_version, '')
    if find_unused is None and not static_graph:
        return CheckResult('ddp-inplace-view', 'SKIP', 'torch %s: DDP outputs are views with '
                           'find_unused_parameters=True; give --config to know' % torch_version, '')
    if not find_unused and not static_graph:
        return CheckResult('ddp-inplace-view', 'OK', 'torch %s with find_unused_parameters=False: DDP returns '
                           'its outputs as they are' % torch_version, '')
    return CheckResult(
        'ddp-inplace-view', 'WARN',
        'torch %s with DDP and %s: DDP returns its outputs through _DDPSink as views; an in-place op on one '
        '(loss /= n, out[..., :2] = ..., x += y) raises "Output 0 of SliceBackward0/_DDPSinkBackward is a view '
        'and is being modified inplace" (pytorch#61982, fixed in torch 1.11 by pytorch#66015)'
        % (torch_version, 'static_graph' if static_graph else 'find_unused_parameters=True'),
        "pip install 'torch>=1.11' (with the matching mmcv-full), or make those ops out-of-place "
        "(x = x + y; out = out.clone() before out[..., :2] = ...)")
