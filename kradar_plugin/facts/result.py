"""The one result type of the version facts, the doctor, the distributed pitfalls and the eval-only preflight:
a named check, its status, a one-line reason and, when not OK, the fix. ``to_dict``/``from_dict`` are the one
way to serialize it as text (``--json``, the loader probe's output line); pickling works on the object itself.
Stdlib only; it lives with the version facts, below the core that reads them.
"""
import collections

# status: 'OK' | 'WARN' | 'FAIL' | 'SKIP' (not applicable here, with the reason why).
STATUSES = ('OK', 'SKIP', 'WARN', 'FAIL')


class CheckResult(collections.namedtuple('CheckResult', 'name status reason fix')):
    """(name, status, reason, fix): ``name`` is the check's report name ('numba-numpy', 'sampler', ...),
    ``fix`` is '' when there is none."""

    __slots__ = ()

    def to_dict(self):
        """{'name', 'status', 'reason', 'fix'}: the JSON form (``--json``, the loader probe's output line)."""
        return dict(self._asdict())

    @classmethod
    def from_dict(cls, item):
        """The inverse of ``to_dict`` (a missing 'fix' reads as '')."""
        return cls(item['name'], item['status'], item['reason'], item.get('fix', ''))
