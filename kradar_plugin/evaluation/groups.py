"""User-defined groups of K-Radar sequences, evaluated beside K-Radar's conditions (RAF's ``clean`` = 1-20, 22
and ``noisy``; L4DR's ``unnormal``; a condition split list such as ``train_sleet.txt``).

A group is a name and a set of sequence numbers: written ``1-20,22`` (``--group clean=1-20,22``), as a list
of numbers and ranges, or as the path of a K-Radar split list (``<seq>,<label>`` lines; the group holds the
sequences it names: every evaluated frame of them). A groups file (``--groups``) maps names to those, in JSON
or in YAML (PyYAML when installed, else the flat subset ``name: 1-20, 22`` / ``name:`` with ``- item``
lines). In the results a group is ``group/<name>``, next to ``weather/<climate>``: it carries GT counts,
bootstrap intervals over its sequences and the paired comparison as the weather groups do.

Checked before evaluating (:func:`check`): a sequence that no evaluated frame belongs to is an error naming
it; groups that share sequences are allowed and said (one note); a group may be empty (its cells are N/A).
"""
import collections
import json
import os
import re

#: one user group: its name, its sequence numbers (a frozenset of int) and where it was defined
UserGroup = collections.namedtuple('UserGroup', 'name sequences source')

_NAME = re.compile(r'^[A-Za-z0-9_.+-]{1,40}$')
#: names of K-Radar's own groups and conditions, which a user group may not take
RESERVED = ('all', 'total')
_MAX_SEQUENCE = 10 ** 6
#: a groups file names a few groups: 1 MB is thousands of times more
GROUPS_FILE_LIMIT = 1 << 20


def _range_items(items, where):
    out = set()
    for item in items:
        text = str(item).strip() if not isinstance(item, bool) else None
        if text == '':
            continue
        lo, sep, hi = (text or '').partition('-')
        try:
            if text is None or len(lo) > 7 or len(hi) > 7:
                raise ValueError(text)
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError('{}: {!r} is not a sequence number or a range such as 1-20'.format(where, item))
        if first < 1 or last < first or last > _MAX_SEQUENCE:
            raise ValueError('{}: bad sequence range {!r}'.format(where, text))
        out.update(range(first, last + 1))
    return out


def sequences_of(value, where, base_dir=None):
    """The sequence numbers (frozenset) of a group's value: '1-20,22', a list of numbers and ranges, or a split
    list path (relative to ``base_dir``). ``where`` names the group in errors."""
    if isinstance(value, (list, tuple)):
        return frozenset(_range_items(value, where))
    if isinstance(value, int) and not isinstance(value, bool):
        return frozenset(_range_items([value], where))
    if not isinstance(value, str):
        raise ValueError('{}: expected sequence numbers and ranges (1-20,22) or a split list file, got {}'.format(
            where, type(value).__name__))
    text = value.strip()
    if text.endswith('.txt') or os.sep in text or '/' in text:   # a split list file
        from kradar_plugin.files.splits import read_split
        path = text if os.path.isabs(text) or base_dir is None else os.path.join(base_dir, text)
        return frozenset(int(e.sequence) for e in read_split(path))
    return frozenset(_range_items(text.split(','), where))


def _checked_name(name, where):
    if not isinstance(name, str) or not _NAME.match(name) or name.lower() in RESERVED:
        raise ValueError('{}: group name {!r}: use letters, digits, ".", "_", "+" or "-" (at most 40; not '
                         '"all" or "total")'.format(where, name))
    return name


def parse_option(text):
    """A :class:`UserGroup` of one ``--group NAME=1-20,22`` value."""
    name, sep, value = str(text).partition('=')
    where = '--group {!r}'.format(text)
    if not sep:
        raise ValueError('{}: expected NAME=SEQUENCES, e.g. clean=1-20,22'.format(where))
    name = _checked_name(name.strip(), where)
    return UserGroup(name, sequences_of(value, '{} (group {})'.format(where, name)), '--group')


def _mini_yaml(text, path):
    """The flat YAML subset ``name: value`` and ``name:`` followed by ``- item`` lines, as a dict."""
    out = collections.OrderedDict()
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split('#', 1)[0].rstrip()
        if not body.strip():
            continue
        stripped = body.strip()
        if stripped.startswith('- ') or stripped == '-':
            if current is None or not isinstance(out[current], list):
                raise ValueError('{}:{}: a list item outside a group'.format(path, number))
            out[current].append(stripped[1:].strip())
            continue
        key, sep, value = stripped.partition(':')
        if not sep or body[0].isspace():
            raise ValueError('{}:{}: expected "name: sequences" (flat YAML; install PyYAML for more)'.format(
                path, number))
        key, value = key.strip().strip('\'"'), value.strip()
        if value.startswith('[') and value.endswith(']'):
            value = [v.strip().strip('\'"') for v in value[1:-1].split(',')]
        elif value:
            value = value.strip('\'"')
        else:
            value = []
        out[key] = value
        current = key
    return out


def load_file(path):
    """The :class:`UserGroup` list of a groups file (JSON or YAML), in the file's order."""
    from kradar_plugin.files.text import read_text
    text = read_text(path, 'groups file', limit=GROUPS_FILE_LIMIT)
    if path.lower().endswith('.json') or text.lstrip().startswith('{'):
        try:
            mapping = json.loads(text, object_pairs_hook=collections.OrderedDict)
        except ValueError as exc:
            raise ValueError('--groups {}: not valid JSON ({})'.format(path, exc))
    else:
        try:
            import yaml
        except ImportError:
            mapping = _mini_yaml(text, path)
        else:
            try:
                mapping = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError('--groups {}: not valid YAML ({})'.format(path, ' '.join(str(exc).split())))
    if not isinstance(mapping, dict) or not mapping:
        raise ValueError('--groups {}: expected a mapping of group name to sequences (e.g. {{"clean": "1-20,22"}})'
                         .format(path))
    base = os.path.dirname(os.path.abspath(path))
    return [UserGroup(_checked_name(name, '--groups {}'.format(path)),
                      sequences_of(value, '--groups {} (group {})'.format(path, name), base), path)
            for name, value in mapping.items()]


def resolve(groups):
    """:class:`UserGroup` list from what a user gives: None, a groups file path, a ``{name: sequences}`` dict,
    a list of ``NAME=SEQUENCES`` strings, of UserGroups, or of those mixed; a name given twice is an error."""
    if groups is None:
        return []
    if isinstance(groups, str):
        items = load_file(groups)
    elif isinstance(groups, dict):
        items = [UserGroup(_checked_name(n, 'groups'), sequences_of(v, 'groups[{!r}]'.format(n)), 'groups')
                 for n, v in groups.items()]
    else:
        items = []
        for g in groups:
            if isinstance(g, UserGroup):
                items.append(g)
            elif isinstance(g, str) and '=' in g:
                items.append(parse_option(g))
            elif isinstance(g, str):
                items.extend(load_file(g))
            else:
                raise ValueError('groups: expected NAME=SEQUENCES strings or a groups file, got {!r}'.format(g))
    seen = {}
    for g in items:
        if g.name in seen:
            raise ValueError('group {!r} is defined twice ({} and {})'.format(g.name, seen[g.name], g.source))
        seen[g.name] = g.source
    return items


def sequence_key(value):
    """A frame's sequence as a number ('01', '1' and 1 are sequence 1), or its text when not a number."""
    text = str(value).strip() if value is not None else ''
    return int(text) if text.isdigit() and len(text) < 8 else text


def _spans(numbers):
    numbers = sorted(numbers)
    out, start = [], None
    for k, n in enumerate(numbers):
        if start is None:
            start = n
        if k + 1 == len(numbers) or numbers[k + 1] != n + 1:
            out.append(str(start) if start == n else '{}-{}'.format(start, n))
            start = None
    return ','.join(out)


def group_option(group):
    """``NAME=SPANS`` of a :class:`UserGroup`: the ``--group`` value that defines it again."""
    return '{}={}'.format(group.name, _spans(group.sequences))


def check(user_groups, conditions):
    """Notes (a list of lines) on ``user_groups`` against the frames' condition rows: a ValueError when a frame
    has no sequence or a group names a sequence no frame belongs to; one note per pair of groups that share
    sequences."""
    if not user_groups:
        return []
    if conditions is None:
        raise ValueError('groups of sequences need each frame\'s sequence: infos with label_file (kradar-create-'
                         'data, EchoFusion) or --conditions rows with "sequence"; none are known here')
    known = set(sequence_key(row.get('sequence')) for row in conditions)
    if '' in known:
        raise ValueError('groups of sequences need each frame\'s sequence; some frames have none (infos without '
                         'label_file, --conditions rows without "sequence")')
    numbers = set(k for k in known if isinstance(k, int))
    for g in user_groups:
        unknown = sorted(g.sequences - numbers)
        if unknown:
            raise ValueError('group {!r} ({}): sequence {} is not among the evaluated frames\' sequences ({})'
                             .format(g.name, g.source, _spans(unknown), _spans(numbers) or 'none numbered'))
    notes = []
    for i, a in enumerate(user_groups):
        for b in user_groups[i + 1:]:
            shared = a.sequences & b.sequences
            if shared:
                notes.append('groups {} and {} overlap: both hold sequence {} (allowed; their frames count in '
                             'both)'.format(a.name, b.name, _spans(shared)))
    return notes


def frames_of(user_groups, conditions, frames):
    """``{'group/<name>': frame indices}`` of ``frames`` (int64 array) whose sequence is in each group."""
    import numpy as np
    keys = [sequence_key(conditions[i].get('sequence')) for i in frames.tolist()]
    keys = np.array([k if isinstance(k, int) else -1 for k in keys], dtype=np.int64)
    out = collections.OrderedDict()
    for g in user_groups:
        members = np.array(sorted(g.sequences), dtype=np.int64)
        out['group/' + g.name] = frames[np.isin(keys, members)] if len(frames) else frames
    return out
