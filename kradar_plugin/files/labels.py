"""One K-Radar label file, any version, as written (LiDAR os2-64 frame, yaw in degrees, half sizes).

Line 1 is the header ``* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)=<rdr>_<ldr64>_<camf>_<ldr128>_<camr>,
timestamp=<t>``; then one object a line, fields separated by ``,`` (mostly ``, ``):

====== ====================================================== ======
v1.0   ``*, id, prev_id, class, x, y, z, yaw, l/2, w/2, h/2``  11
v1.1   ``*, avail, id, prev_id, class, x, y, z, yaw, l/2, w/2, h/2``  12
v2.0   ``*, id, class, x, y, z, yaw, l/2, w/2, h/2``  10
v2.1   ``*, avail, id, class, x, y, z, yaw, l/2, w/2, h/2``  11
====== ====================================================== ======

The version is an argument, checked against the content (v1.0 and v2.1 both have 11 fields; field 1 is an integer in
v1.0 and ``R``/``L``/``L1`` in v2.1). The real files' quirks are read as K-Radar's loader reads them and listed in
``quirks`` as (kind, line or None, value) for :mod:`.quirks`: CRLF endings, ``#`` lines (BEV-only boxes), v2.0
headers sharing their line with the first object (split at the second ``*``), blank lines, frames without objects,
visibility values outside R/L/L1 and classes beyond the benchmark's five (kept as written), yaws outside +-180
degrees (not wrapped: ``yaw * pi / 180`` as it is), and the object lines K-Radar's loader skips with '* split err'
(v1.0/v1.1 lines of another field count, v1.1 ids that are not integers: also in ``skipped``). Anything else is a
:class:`KRadarFileError` naming file, line, field and value.
"""
import collections
import math
import re

from .errors import KRadarFileError
from .text import read_text

VERSIONS = ('v1.0', 'v1.1', 'v2.0', 'v2.1')
#: field names per version, in file order
FIELDS = {
    'v1.0': ('marker', 'id', 'prev_id', 'class', 'x', 'y', 'z', 'yaw', 'l/2', 'w/2', 'h/2'),
    'v1.1': ('marker', 'avail', 'id', 'prev_id', 'class', 'x', 'y', 'z', 'yaw', 'l/2', 'w/2', 'h/2'),
    'v2.0': ('marker', 'id', 'class', 'x', 'y', 'z', 'yaw', 'l/2', 'w/2', 'h/2'),
    'v2.1': ('marker', 'avail', 'id', 'class', 'x', 'y', 'z', 'yaw', 'l/2', 'w/2', 'h/2'),
}
#: K-Radar's visibility flags (v1.1, v2.1): R radar-visible, L LiDAR only, L1 a v2.0 box without a v1.1 match;
#: other values (the real v2.1 has LL, LR and l) are kept as written and counted as a quirk
AVAIL = ('R', 'L', 'L1')
#: the classes of K-Radar's benchmarks; other names (Pedestrian Group, Bicycle Group) are kept and counted
BENCHMARK_CLASSES = ('Sedan', 'Bus or Truck', 'Motorcycle', 'Bicycle', 'Pedestrian')
#: the sensors of the header's index, in order
SENSORS = ('rdr', 'ldr64', 'camf', 'ldr128', 'camr')

LabelObject = collections.namedtuple('LabelObject', 'name avail id prev_id x y z yaw_deg half_l half_w half_h')
LabelObject.__doc__ = ("One object as written: class ``name``, ``avail`` ('R' where the version has none), "
                       "track ``id`` and ``prev_id`` (-1 where the version has none), centre (x, y, z) and "
                       "yaw in degrees in the LiDAR frame, half sizes.")
LabelFile = collections.namedtuple('LabelFile', 'path version indices timestamp objects skipped quirks')
LabelFile.__doc__ = ("A parsed label file: ``indices`` {sensor: 5-digit index text} of the header, "
                     "``timestamp`` text, ``objects`` a list of :class:`LabelObject`, ``skipped`` the (line, "
                     "reason) of object lines K-Radar's loader skips too, ``quirks`` the (kind, line or None, "
                     "value) of each quirk of the real files met (kinds of :data:`.quirks.KINDS`).")


def normalize_version(version):
    """'v2.0' from 'v2.0', 'v2_0', '2.0' or 'V2.0'; ValueError for anything else."""
    text = str(version).strip().lower().replace('_', '.')
    if not text.startswith('v'):
        text = 'v' + text
    if text not in VERSIONS:
        raise ValueError('label version {!r}: K-Radar has {}'.format(version, ', '.join(VERSIONS)))
    return text


def read_label(path, version='v1.0'):
    """The :class:`LabelFile` at ``path`` read as ``version``."""
    version = normalize_version(version)
    return parse_text(read_text(path, 'label file'), version, path)


def parse_text(text, version, path='<label>'):
    """:class:`LabelFile` of a label file's whole text: :func:`parse_label` of its lines, plus the quirks only
    the text shows (no final newline, CRLF endings, trailing spaces)."""
    label = parse_label(text.splitlines(), version, path)
    quirks = label.quirks
    if text and text[-1] not in '\r\n':
        quirks.append(('no_final_newline', None, None))
    if '\r' in text:
        quirks.append(('crlf', None, None))
    if ' \n' in text or ' \r' in text or text[-1:] == ' ':
        quirks.append(('trailing_space', None, None))
    return label


def parse_label(lines, version, path='<label>'):
    """:class:`LabelFile` of a label file's lines (see the module docstring)."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    if not end:
        raise KRadarFileError(path, 'empty label file: expected the header "* idx(...)=..., timestamp=..."',
                              line=1)
    header, body, glued = _split_header(lines)
    indices, timestamp = _header(header, path)
    quirks = [('glued_header', 1, None)] if glued else []
    if end < len(lines):
        quirks.extend(('blank_line', number, None) for number in range(end + 1, len(lines) + 1))
        body = body[:len(body) - (len(lines) - end)]
    n_fields = len(FIELDS[version])
    fast = _FAST[version]
    objects, skipped = [], []
    total = 0.0          # nan or inf anywhere makes the sum non-finite: then every value is checked
    for number, line in body:
        if line[:1] == '#':
            quirks.append(('bev_only', number, None))
            continue
        parts = line.split(',', n_fields)     # float()/int() ignore the spaces around the values
        if len(parts) == n_fields and parts[0] == '*':
            try:                 # the common case in one step; any doubt takes the checking path below
                obj = fast(parts)
                if obj[0]:
                    total += sum(obj[4:])
                    objects.append(obj)
                    _object_quirks(obj, number, quirks)
                    continue
            except ValueError:
                pass
        obj = _checked_line(line, version, path, number, skipped, quirks)
        if obj is not None:
            objects.append(obj)
    if not -_INF < total < _INF:
        return parse_label_checked(lines, version, path)
    if skipped:
        quirks.extend(('split_err', number, None) for number, _ in skipped)
    if not body:
        quirks.append(('header_only', None, None))
    return LabelFile(path, version, indices, timestamp, objects, skipped, quirks)


def _split_header(lines):
    """(header, [(line number, object line)], glued) of a label file's lines; the v2.0 quirk of the header and
    the first object on one line is split at the second ``*`` (``glued``)."""
    header = lines[0].strip()
    body = list(enumerate(lines[1:], 2))
    glued = header.count('*') >= 2
    if glued:
        second = header.index('*', 1)
        body.insert(0, (1, header[second:]))
        header = header[:second].rstrip().rstrip(',').rstrip()
    return header, body, glued


def _checked_line(line, version, path, number, skipped, quirks):
    """The object of one line with every value checked: None for a blank or ``#`` line, and for the lines
    K-Radar's loader itself skips (appended to ``skipped`` as (line, reason)); else the first bad value raises.
    Quirks met are appended to ``quirks``."""
    text = line.strip()
    if not text:
        quirks.append(('blank_line', number, None))
        return None
    if text[0] == '#':
        quirks.append(('bev_only', number, None))
        return None
    fields = FIELDS[version]
    parts = [p.strip() for p in text.split(',', _MAX_FIELDS)]     # bounded: a line of commas is one error
    if parts[0] != '*':
        raise KRadarFileError(path, "an object line starts with '*' (or '#' for a BEV-only box)",
                              line=number, field='marker', value=parts[0])
    if len(parts) != len(fields):
        count = len(parts) if len(parts) <= _MAX_FIELDS else 'more than {}'.format(_MAX_FIELDS)
        if version in ('v1.0', 'v1.1'):     # K-Radar's loader prints '* split err' and skips the line
            skipped.append((number, '{} fields instead of {}'.format(count, len(fields))))
            return None
        raise KRadarFileError(path, 'a {} object line has {} fields ({}), this one {}{}'.format(
            version, len(fields), ', '.join(fields), count, _version_hint(parts, version)), line=number)
    if version == 'v1.1' and not all(_is_int(parts[k]) for k in (2, 3)):     # skipped by K-Radar's loader too
        skipped.append((number, 'id / prev_id not integers ({!r}, {!r})'.format(parts[2][:20], parts[3][:20])))
        return None
    obj = _parse_object(parts, version, path, number)
    _object_quirks(obj, number, quirks)
    return obj


def _object_quirks(obj, number, quirks):
    """Appends to ``quirks`` what one object holds beyond the format's letter: a visibility value outside
    R/L/L1, a class outside the benchmark's five, a yaw outside +-180 degrees (all kept as written)."""
    if obj.avail not in _AVAIL:
        quirks.append(('visibility', number, obj.avail))
    if obj.name not in _BENCHMARK:
        quirks.append(('class', number, obj.name))
    if not -180.0 <= obj.yaw_deg <= 180.0:
        quirks.append(('yaw', number, None))


def _is_int(text):
    try:
        int(text)
        return True
    except ValueError:
        return False


def parse_label_checked(lines, version, path):
    """:func:`parse_label` with every value checked (the first bad one raises)."""
    header, body, glued = _split_header(lines)
    indices, timestamp = _header(header, path)
    objects, skipped, quirks = [], [], [('glued_header', 1, None)] if glued else []
    for number, line in body:
        obj = _checked_line(line, version, path, number, skipped, quirks)
        if obj is not None:
            objects.append(obj)
    return LabelFile(path, version, indices, timestamp, objects, skipped, quirks)


_INF = float('inf')
_MAX_FIELDS = max(len(f) for f in FIELDS.values())
_AVAIL = frozenset(AVAIL)
_BENCHMARK = frozenset(BENCHMARK_CLASSES)


def _checked_avail(text):
    text = text.strip()
    if text not in _AVAIL:
        raise ValueError(text)
    return text


# the fast paths: float()/int() accept the surrounding spaces; a bad value raises ValueError; the tuple is
# made with tuple.__new__ (a namedtuple's own __new__ is Python code, the larger part of the cost here)
_new = tuple.__new__
_FAST = {
    'v1.0': lambda p: _new(LabelObject, (p[3].strip(), 'R', int(p[1]), int(p[2]), float(p[4]), float(p[5]),
                                         float(p[6]), float(p[7]), float(p[8]), float(p[9]), float(p[10]))),
    'v1.1': lambda p: _new(LabelObject, (p[4].strip(), _checked_avail(p[1]), int(p[2]), int(p[3]), float(p[5]),
                                         float(p[6]), float(p[7]), float(p[8]), float(p[9]), float(p[10]),
                                         float(p[11]))),
    'v2.0': lambda p: _new(LabelObject, (p[2].strip(), 'R', int(p[1]), -1, float(p[3]), float(p[4]), float(p[5]),
                                         float(p[6]), float(p[7]), float(p[8]), float(p[9]))),
    'v2.1': lambda p: _new(LabelObject, (p[3].strip(), _checked_avail(p[1]), int(p[2]), -1, float(p[4]),
                                         float(p[5]), float(p[6]), float(p[7]), float(p[8]), float(p[9]),
                                         float(p[10]))),
}
#: the header as the real files write it, in one match (anything else takes the checking path of _header);
#: greedy and anchored, so its cost is linear in the line (a lazy group before trailing spaces was quadratic)
_HEADER = re.compile(r'\*[^=,]*=([0-9]+)_([0-9]+)_([0-9]+)_([0-9]+)_([0-9]+) *, *timestamp=(.*)\Z')


def _header(header, path):
    match = _HEADER.match(header)
    if match is not None:
        values = match.groups()
        return dict(zip(SENSORS, values[:5])), values[5].strip()
    if not header.startswith('*') or '=' not in header:
        tool = (' (this is the header of K-Radar\'s labelling tool, uis/ui_labeling.py, which neither K-Radar\'s '
                'loaders nor its released label files use)' if header.startswith('* radar idx:') else '')
        raise KRadarFileError(path, 'expected the header "* idx(...)=<rdr>_<ldr64>_<camf>_<ldr128>_<camr>, '
                                    'timestamp=<t>"' + tool, line=1, field='header', value=header[:80])
    idx_part, _, rest = header.partition(',')
    values = idx_part.split('=', 1)[1].strip().split('_')
    if len(values) != len(SENSORS) or not all(v.isdigit() for v in values):
        raise KRadarFileError(path, 'expected five sensor indices <rdr>_<ldr64>_<camf>_<ldr128>_<camr>', line=1,
                              field='idx', value=idx_part.split('=', 1)[1].strip())
    timestamp = rest.split('=', 1)[1].strip() if '=' in rest else ''
    return dict(zip(SENSORS, values)), timestamp


def _version_hint(parts, version):
    guesses = [v for v, f in sorted(FIELDS.items()) if len(f) == len(parts) and v != version]
    if not guesses:
        return ''
    return ' (written as {}? pass that label version)'.format(' or '.join(guesses))


def _number(text, path, line, field):
    try:
        value = float(text)
    except ValueError:
        raise KRadarFileError(path, 'expected a number', line=line, field=field, value=text)
    if not math.isfinite(value):
        raise KRadarFileError(path, 'expected a finite number', line=line, field=field, value=text)
    return value


def _integer(text, path, line, field, version):
    try:
        return int(text)
    except ValueError:
        hint = ''
        if text in AVAIL and version == 'v1.0':
            hint = " (an avail flag: is this a v2.1 file? pass --label-version v2.1)"
        raise KRadarFileError(path, 'expected an integer' + hint, line=line, field=field, value=text)


def _avail(text, path, line, version):
    """A visibility value as written: R, L, L1, or another token the real files carry (LL, LR, l), which
    K-Radar's loader keeps too; an integer (a v1.0 file read as v2.1) or nothing is an error."""
    if text in _AVAIL:
        return text
    integer = text.lstrip('-').isdigit()
    if not text or integer or not _TOKEN.match(text):
        hint = ' (an integer: is this a v1.0 file? pass --label-version v1.0)' if integer and version == 'v2.1' \
            else ''
        raise KRadarFileError(path, 'expected a visibility value such as R, L, L1{}'.format(hint), line=line,
                              field='avail', value=text)
    return text


#: a visibility value other than R/L/L1 that is kept: a short word (the real v2.1 has LL, LR and l)
_TOKEN = re.compile(r'[A-Za-z][A-Za-z0-9_]{0,7}\Z')


def _name(text, path, line):
    if not text:
        raise KRadarFileError(path, 'expected a class name', line=line, field='class', value=text)
    return text


def _geometry(parts, start, path, line, version):
    names = FIELDS[version][start:start + 7]
    return [_number(parts[start + k], path, line, names[k]) for k in range(7)]


#: per version, the field index of the class, avail (None: 'R'), id, prev_id (None: -1) and x (the geometry's first)
_LAYOUT = {'v1.0': (3, None, 1, 2, 4), 'v1.1': (4, 1, 2, 3, 5), 'v2.0': (2, None, 1, None, 3),
           'v2.1': (3, 1, 2, None, 4)}


def _parse_object(parts, version, path, line):
    """The :class:`LabelObject` of an object line's fields, each value checked (the first bad one raises)."""
    name, avail, ident, prev_id, start = _LAYOUT[version]
    return LabelObject(_name(parts[name], path, line),
                       'R' if avail is None else _avail(parts[avail], path, line, version),
                       _integer(parts[ident], path, line, 'id', version),
                       -1 if prev_id is None else _integer(parts[prev_id], path, line, 'prev_id', version),
                       *_geometry(parts, start, path, line, version))
