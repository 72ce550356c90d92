"""One line of the doctor's report: a named check, its status and, when not OK, the fix."""
import collections

# status: 'OK' | 'WARN' | 'FAIL' | 'SKIP' (not applicable here, with the reason why).
CheckResult = collections.namedtuple('CheckResult', 'name status reason fix')

STATUSES = ('OK', 'SKIP', 'WARN', 'FAIL')
