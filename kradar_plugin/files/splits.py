"""Split lists: K-Radar's ``resources/split/{train,test}.txt`` and EchoFusion's ``ImageSets/*.txt``, one
``<seq>,<rdr>_<ldr64>.txt`` a line (K-Radar's have no trailing newline)."""
import collections
import os
import re

from .errors import KRadarFileError
from .text import kind_of, lines_of

SplitEntry = collections.namedtuple('SplitEntry', 'sequence label line number')
SplitEntry.__doc__ = ("One frame of a split: ``sequence`` ('1'..'58'), ``label`` file name, ``line`` its "
                      "'<seq>,<label>' (the infos' ``label_file``), ``number`` its line in the split file.")


def read_split(path, sequences=None, quirks=None):
    """The :class:`SplitEntry` list of a split file, in file order; ``sequences`` (a set of sequence names)
    keeps only those. ``#`` lines are comments; a frame listed twice is kept once (as K-Radar's dictionary
    keeps it); both are counted in ``quirks`` (a :class:`~.quirks.Quirks`) when given. Two entries glued on
    one line (a list appended to one without a final newline) and anything else that is not
    ``<seq>,<rdr>_<ldr64>.txt`` are a :class:`KRadarFileError` naming the line."""
    out, seen, name = [], {}, os.path.basename(path)
    for number, line in enumerate(lines_of(path, 'split file'), 1):
        text = line.strip()
        if not text:
            continue
        if text[0] == '#':
            if quirks is not None:
                quirks.add('split_comment', '{}:{}'.format(name, number))
            continue
        seq, label = _entry(text, path, number)
        if sequences is not None and seq not in sequences:
            continue
        key = (seq, label)
        if key in seen:
            if quirks is not None:
                quirks.add('split_duplicate', '{}:{} (first on line {})'.format(name, number, seen[key]))
            continue
        seen[key] = number
        out.append(SplitEntry(seq, label, '{},{}'.format(seq, label), number))
    return out


#: K-Radar's sequences are 1..58; a sequence number longer than this is not one (and int() stays cheap)
MAX_SEQUENCE_DIGITS = 5
#: a label file name longer than this is not one of K-Radar's ('<rdr>_<ldr64>.txt' has 15 characters)
MAX_LABEL_NAME = 64
_GLUED = re.compile(r'\.txt\s*[0-9]+\s*,')


def _entry(text, path, number):
    """(sequence, label file name) of one split line."""
    seq, sep, label = text.partition(',')
    seq, label = seq.strip(), label.strip()
    if sep and _GLUED.search(label):
        raise KRadarFileError(path, 'two entries glued on one line: a list was appended to one that had no final '
                                    'newline (K-Radar\'s split lists have none); put a line break after ".txt"',
                              line=number, field='entry', value=text)
    if not sep or not is_sequence(seq) or not plain_label_name(label):
        raise KRadarFileError(path, 'expected "<seq>,<rdr>_<ldr64>.txt"', line=number, field='entry',
                              value=text)
    return str(int(seq)), label


def is_sequence(text):
    """Whether ``text`` is a sequence number: ASCII digits, at most :data:`MAX_SEQUENCE_DIGITS` of them."""
    return 0 < len(text) <= MAX_SEQUENCE_DIGITS and text.isascii() and text.isdigit()


def plain_label_name(name):
    """Whether ``name`` may name a label file in a sequence's label folder: a plain file name ending in
    ``.txt`` (no folder, no ``..``, no NUL, no comma, not hidden), of at most :data:`MAX_LABEL_NAME` characters.
    The rule of split entries and of an infos' ``annos['label_file']``: a label outside the label folder is never
    read."""
    return (name.endswith('.txt') and 4 < len(name) <= MAX_LABEL_NAME and not name.startswith('.')
            and not any(c in name for c in '/\\\x00,') and os.path.basename(name) == name)


def count_overlaps(lists, quirks):
    """:func:`overlaps` of ``lists``, each counted in ``quirks`` as 'split_overlap' with the lines that list it
    ('58,00453_00448.txt (test.txt:1, train.txt:17459)'); returns them."""
    both = overlaps(lists)
    for line, places in both:
        quirks.add('split_overlap', '{} ({})'.format(line, ', '.join('{}.txt:{}'.format(*p) for p in places)))
    return both


def overlaps(lists):
    """The frames listed in more than one split list: [(frame line, [(split name, line number), ...])] in the
    order of the first list that has them; ``lists`` is {split name: [SplitEntry]}."""
    where = collections.OrderedDict()
    for name in sorted(lists):
        for entry in lists[name]:
            where.setdefault(entry.line, []).append((name, entry.number))
    return [(line, places) for line, places in where.items() if len(places) > 1]


def split_files(split_dir):
    """{split name: path} of the ``*.txt`` split lists in ``split_dir`` (sorted by name)."""
    if not os.path.isdir(split_dir):
        raise KRadarFileError(split_dir, 'no such split folder' if not os.path.exists(split_dir)
                              else 'not a folder (give the folder holding train.txt / test.txt)')
    names = sorted(n for n in os.listdir(split_dir) if n.endswith('.txt') and not n.startswith('.'))
    for name in names:      # a FIFO, device or folder named <split>.txt is refused by name, never dropped
        path = os.path.join(split_dir, name)
        try:
            other = kind_of(os.stat(path).st_mode)
        except OSError as exc:
            raise KRadarFileError(path, 'cannot read the split list ({})'.format(exc.strerror or exc))
        if other:
            raise KRadarFileError(path, 'split list is {}, not a regular file: refused'.format(other))
    if not names:
        raise KRadarFileError(split_dir, 'no split list (*.txt) in this folder')
    return dict((n[:-4], os.path.join(split_dir, n)) for n in names)


def parse_sequences(text):
    """The set of sequence names of '1-20', '1,3,5-7' or '21'."""
    out = set()
    for part in str(text).split(','):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition('-')
        try:
            if len(lo.strip()) > MAX_SEQUENCE_DIGITS or len(hi.strip()) > MAX_SEQUENCE_DIGITS:
                raise ValueError(part)
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError('--sequences {!r}: expected numbers and ranges such as 1-20 or 1,3,5-7'.format(text))
        if first < 1 or last < first:
            raise ValueError('--sequences {!r}: bad range {!r}'.format(text, part))
        out.update(str(k) for k in range(first, last + 1))
    if not out:
        raise ValueError('--sequences {!r}: no sequence'.format(text))
    return out
