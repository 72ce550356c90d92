"""The one result type of the version facts and the doctor: a named check, its status, a one-line reason
and, when not OK, the fix.

Every producer returns it: the rules (``doctor/rules``), the version facts they apply
(``kradar_plugin.facts``, also read by the rotated-IoU backend choice), the distributed pitfalls
(``doctor/pitfalls``) and the eval-only preflight. Where a result must leave the process as text (the loader
probe's JSON line, ``--json``), ``to_dict``/``from_dict`` are the one way to serialize it; pickling (e.g.
``all_gather_object``) works on the object itself. Stdlib only: importing it costs nothing. It lives with the version facts, below the core that reads
them (the rotated-IoU backend choice); ``kradar_plugin.doctor.result`` is its name for the doctor.
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


def skip(name, reason):
    """[SKIP result]: check ``name`` does not apply here, and why (what a rule returns then)."""
    return [CheckResult(name, 'SKIP', reason, '')]
