"""Check ``leftovers``: training processes, ``torch_shm_manager`` daemons and ``/dev/shm/torch_*`` segments
of earlier runs still alive on this machine."""
import io
import os
import re

from ...facts.result import CheckResult
from .shm import mib

_TRAINING_CMD = re.compile(r'(train\.py|test\.py|torch\.distributed\.(run|launch)|torchrun|dist_train\.sh|'
                           r'multiprocessing\.(spawn|forkserver)|from multiprocessing)')


def _read(path, binary=False):
    try:
        with io.open(path, 'rb' if binary else 'r') as f:
            return f.read()
    except (OSError, IOError, UnicodeDecodeError):
        return None


def _proc_stat(proc, pid):
    text = _read(os.path.join(proc, str(pid), 'stat'))
    if not text or ')' not in text:
        return None
    comm = text[text.index('(') + 1:text.rindex(')')]
    fields = text[text.rindex(')') + 2:].split()
    return {'comm': comm, 'ppid': int(fields[1]), 'start_ticks': int(fields[19])}


def own_process_tree(proc='/proc', pid=None):
    """This process, its ancestors, and every descendant of its top-most ancestor that is part of the same
    job (the launcher's children: the other ranks and their workers)."""
    pid = pid or os.getpid()
    stats = dict((int(e), _proc_stat(proc, e)) for e in os.listdir(proc) if e.isdigit())
    stats = dict((p, st) for p, st in stats.items() if st)
    ancestors, current = [], pid
    while current in stats and current not in ancestors and current > 1:
        ancestors.append(current)
        current = stats[current]['ppid']
    # the job's root: the outermost ancestor whose command is a launcher or a train script
    roots = [a for a in ancestors if _TRAINING_CMD.search(_cmdline(proc, a) or '')]
    root = roots[-1] if roots else pid
    children = {}
    for p, st in stats.items():
        children.setdefault(st['ppid'], []).append(p)
    tree, stack = set(), [root, pid]
    while stack:
        p = stack.pop()
        if p not in tree:
            tree.add(p)
            stack.extend(children.get(p, []))
    return tree | set(ancestors)


def _cmdline(proc, pid):
    raw = _read(os.path.join(proc, str(pid), 'cmdline'), binary=True)
    return raw.replace(b'\0', b' ').decode('utf-8', 'replace').strip() if raw else ''


def probe_leftovers(proc='/proc', shm_dir='/dev/shm', exclude=None):
    """Processes of other training jobs and torch_shm_manager daemons of this user, and /dev/shm/torch_*
    segments whose creating process is gone. ``exclude``: pids of the current job (default: own tree)."""
    exclude = own_process_tree(proc) if exclude is None else set(exclude)
    uid = os.getuid() if hasattr(os, 'getuid') else None
    try:
        ticks = os.sysconf('SC_CLK_TCK')
        uptime = float((_read(os.path.join(proc, 'uptime')) or '0').split()[0])
    except (ValueError, OSError, AttributeError, IndexError):
        ticks, uptime = 100, 0.0
    processes, managers = [], []
    for entry in os.listdir(proc) if os.path.isdir(proc) else ():
        if not entry.isdigit() or int(entry) in exclude:
            continue
        try:
            if uid is not None and os.stat(os.path.join(proc, entry)).st_uid != uid:
                continue
        except OSError:
            continue
        st = _proc_stat(proc, entry)
        if not st:
            continue
        age = max(0.0, uptime - st['start_ticks'] / float(ticks)) if uptime else None
        if st['comm'] == 'torch_shm_manager'[:15]:  # the kernel keeps 15 characters of a command name
            managers.append({'pid': int(entry), 'age_s': age})
            continue
        cmd = _cmdline(proc, entry)
        if cmd and 'python' in cmd.split(' ', 1)[0] and _TRAINING_CMD.search(cmd):
            processes.append({'pid': int(entry), 'age_s': age, 'cmd': cmd[:200]})
    segments = []
    for name in sorted(os.listdir(shm_dir)) if os.path.isdir(shm_dir) else ():
        match = re.match(r'torch_(\d+)_', name)
        creator = int(match.group(1)) if match else None
        if creator is None or os.path.exists(os.path.join(proc, str(creator))):
            continue
        try:
            segments.append({'name': name, 'bytes': os.path.getsize(os.path.join(shm_dir, name)), 'pid': creator})
        except OSError:
            continue
    return {'processes': processes, 'shm-managers': managers, 'shm-segments': segments}


def _age(seconds):
    if seconds is None:
        return '?'
    if seconds >= 3600:
        return '%.1f h' % (seconds / 3600.0)
    return '%d min' % (seconds // 60) if seconds >= 60 else '%d s' % seconds


def judge_leftovers(found, include_managers=True):
    """``include_managers``: also report torch_shm_manager daemons (the doctor's sharing-strategy check
    already does)."""
    problems, fixes = [], []
    procs = found.get('processes') or []
    if procs:
        problems.append('%d other training/worker process(es) run on this machine (not part of this job): %s' % (
            len(procs), '; '.join('pid %d (%s) %s' % (p['pid'], _age(p.get('age_s')), p['cmd'][:80])
                                  for p in procs[:3])))
        fixes.append('if they belong to finished or crashed runs: kill %s (they hold GPU memory, /dev/shm and '
                     'ports)' % ' '.join(str(p['pid']) for p in procs[:10]))
    managers = (found.get('shm-managers') or []) if include_managers else []
    if managers:
        problems.append('%d torch_shm_manager daemon(s) alive (file_system sharing of earlier runs)' % len(managers))
        fixes.append('kill %s' % ' '.join(str(m['pid']) for m in managers[:10]))
    segments = found.get('shm-segments') or []
    if segments:
        total = sum(s['bytes'] for s in segments)
        problems.append('%d /dev/shm/torch_* segment(s) (%s) left by exited processes' % (len(segments), mib(total)))
        fixes.append('rm /dev/shm/torch_<pid>_* of dead pids (%s)' % ', '.join(s['name'] for s in segments[:3]))
    if not problems:
        return CheckResult('leftovers', 'OK', 'no leftover training processes, torch_shm_manager daemons or '
                           '/dev/shm/torch_* segments', '')
    return CheckResult('leftovers', 'WARN', '; '.join(problems), '; '.join(fixes))
