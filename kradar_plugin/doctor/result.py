"""The doctor's result type, defined with the version facts (``kradar_plugin.facts.result``) so that
the core can read those facts without importing the doctor."""
from kradar_plugin.facts.result import STATUSES, CheckResult, skip

__all__ = ['STATUSES', 'CheckResult', 'skip']
