"""The doctor's results and their report: a judge's ``Finding``, the named ``CheckResult`` the runner makes of
it, one line per check for people, a stable JSON document for machines."""
import collections
import json

from ..facts.result import STATUSES, CheckResult

SCHEMA_VERSION = 1
_COLORS = {'OK': '\033[32m', 'SKIP': '\033[2m', 'WARN': '\033[33m', 'FAIL': '\033[31m'}

# What a judge (doctor/rules) finds: a CheckResult without the name, which the runner (checks.evaluate) fills in
# from the check's row. status: one of STATUSES; fix: '' when there is none.
Finding = collections.namedtuple('Finding', 'status reason fix', defaults=('',))


def format_report(results, statuses=None, color=False):
    """'STATUS name: reason' lines, each non-OK one followed by '    fix: ...'; ``statuses`` filters
    (e.g. ('FAIL',)). Ends with a summary line; returns '' when the filter leaves nothing."""
    shown = [r for r in results if statuses is None or r.status in statuses]
    if not shown:
        return ''
    width = max(len(r.name) for r in shown)
    lines = []
    for r in shown:
        status = '%-4s' % r.status
        if color:
            status = _COLORS.get(r.status, '') + status + '\033[0m'
        lines.append('%s  %-*s  %s' % (status, width, r.name, r.reason))
        if r.fix and r.status in ('WARN', 'FAIL'):
            lines.append('      %-*s  fix: %s' % (width, '', r.fix))
    lines.append(summary(results))
    return '\n'.join(lines)


def counts(results):
    out = dict.fromkeys(STATUSES, 0)
    out.update(collections.Counter(r.status for r in results))
    return out


def summary(results):
    c = counts(results)
    verdict = 'FAIL' if c['FAIL'] else 'OK'
    return 'kradar-doctor: %s (%d fail, %d warn, %d ok, %d skipped)' % (verdict, c['FAIL'], c['WARN'], c['OK'],
                                                                        c['SKIP'])


def _jsonable(value):
    if isinstance(value, CheckResult):  # e.g. the loader probe's results in facts['pitfalls']
        return value.to_dict()
    if isinstance(value, dict):
        return dict((str(k), _jsonable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def to_json(results, facts=None):
    """The --json document (see the README, section kradar-doctor)."""
    doc = {
        'schema': SCHEMA_VERSION,
        'ok': not any(r.status == 'FAIL' for r in results),
        'counts': counts(results),
        'checks': [r.to_dict() for r in results],
    }
    if facts is not None:
        doc['assumed'] = list(facts.get('assumed', ()))
        doc['facts'] = _jsonable(dict((k, v) for k, v in facts.items() if k != 'assumed'))
    return json.dumps(doc, indent=2, sort_keys=True)
