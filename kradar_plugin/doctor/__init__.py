"""kradar-doctor: names the broken version pair and its fix before a long run, also for a planned environment.

Import-light on purpose (tools/train.py calls it on rank 0 before a run): the heavy modules load on first call.

    from kradar_plugin.doctor import run_checks, format_report
    results = run_checks(quick=True)          # list of CheckResult(name, status, reason, fix)
    print(format_report(results, statuses=('FAIL',)))
"""
from ..facts.result import CheckResult  # a namedtuple, stdlib only

__all__ = ['CheckResult']


def run_checks(assume=None, config=None, train_script=None, compile_test=False, quick=False, probes=None,
               checkpoint=None, probe_model=False, gpu_arch=None):
    """Run every check; see kradar_plugin.doctor.checks.run_checks."""
    from .checks import run_checks
    return run_checks(assume=assume, config=config, train_script=train_script, compile_test=compile_test,
                      quick=quick, probes=probes, checkpoint=checkpoint, probe_model=probe_model, gpu_arch=gpu_arch)


def format_report(results, statuses=None, color=False):
    """Human-readable report; see kradar_plugin.doctor.report.format_report."""
    from .report import format_report
    return format_report(results, statuses=statuses, color=color)
