"""K-Radar's printed results: the ``complete_results.txt`` its conditional evaluation appends to, one file per
confidence threshold (``<log>/test_kitti/<epoch>/<conf>/complete_results.txt``).

The format (read from K-Radar's ``validate_kitti_conditional``), one block per condition and class::

    Conf thr: 0.3, Condition: all
    cls: sed
    iou: 0.7 0.5 0.3 
    bev: 56.7 48.1 30.2 
    3d  :50.1 40.2 21.9 

with a blank line after each block: ``3d  :`` has no space after its colon, each number is followed by a
space, classes are K-Radar's keywords (``sed``, ``bus``, ...), numbers are Python's ``str`` of a float (AP in
percent, one per IoU threshold, in the ``iou:`` line's order). A condition without frames has no block; a
class without GT in a condition is printed ``0.0``. K-Radar appends: of two copies of a block, the later counts.

:func:`read_results` reads such a file (a :class:`KRadarFileError` names file:line for anything else);
:func:`format_block` writes one block exactly as K-Radar does.
"""
import collections
import math
import re

from .errors import KRadarFileError, quote
from .text import read_text, split_fields

#: one printed block: where it starts, its confidence threshold as written and as a float (None for
#: ``None``), its condition, its class keyword, the IoU thresholds and the BEV and 3D APs
Block = collections.namedtuple('Block', 'line conf_text conf condition cls ious bev ap3d')

_HEAD = re.compile(r'^Conf thr:\s*(\S+?)\s*,\s*Condition:\s*(\S.*?)\s*$')
_FIELDS = (('cls', re.compile(r'^cls:\s*(\S+)\s*$')), ('iou', re.compile(r'^iou:(.*)$')),
           ('bev', re.compile(r'^bev:(.*)$')), ('3d', re.compile(r'^3d\s*:(.*)$')))
#: the most numbers a value line may hold (K-Radar prints 3)
MAX_VALUES = 16


class PrintedResults(object):
    """A read ``complete_results.txt``: :attr:`blocks` in file order (a repeated block replaced by its later
    copy), :attr:`notes` (one line per repeated block), :attr:`path`."""

    def __init__(self, path, blocks, notes):
        self.path, self.blocks, self.notes = path, blocks, notes

    def thresholds(self):
        """The confidence thresholds as written, in file order."""
        return list(collections.OrderedDict((b.conf_text, None) for b in self.blocks))

    def conditions(self, conf_text):
        """The condition names printed for one threshold, in file order."""
        return list(collections.OrderedDict((b.condition, None) for b in self.blocks if b.conf_text == conf_text))


def _numbers(text, path, line, field, low, high):
    parts = split_fields(text.strip(), None, MAX_VALUES, path, line, 'numbers') if text.strip() else []
    if not parts:
        raise KRadarFileError(path, 'no number after {!r}: the file is truncated or not K-Radar\'s printed '
                                    'results'.format(field + ':'), line=line, field=field)
    out = []
    for part in parts:
        try:
            value = float(part) if len(part) <= 40 else None
        except ValueError:
            value = None
        if value is None or math.isnan(value) or not low <= value <= high:
            raise KRadarFileError(path, 'expected a number from {:g} to {:g}'.format(low, high), line=line,
                                  field=field, value=part)
        out.append(value)
    return tuple(out)


def _threshold(text, path, line):
    if text == 'None':
        return None
    try:
        value = float(text) if len(text) <= 40 else None
    except ValueError:
        value = None
    if value is None or math.isnan(value) or math.isinf(value):
        raise KRadarFileError(path, 'expected a confidence threshold (a number)', line=line, field='Conf thr',
                              value=text)
    return value


def parse_results(text, path):
    """:class:`PrintedResults` of the text of a ``complete_results.txt`` (``path`` names it in errors)."""
    lines = text.splitlines()
    blocks = []
    notes = []
    seen = {}
    n = 0
    while n < len(lines):
        raw = lines[n].strip()
        if not raw or raw.startswith('#'):
            n += 1
            continue
        head = _HEAD.match(raw)
        if head is None:
            raise KRadarFileError(path, "expected a block's first line 'Conf thr: <T>, Condition: <name>', got "
                                        "{}".format(quote(raw)), line=n + 1)
        start = n + 1
        values = {}
        for k, (field, pattern) in enumerate(_FIELDS):
            n += 1
            got = lines[n].strip() if n < len(lines) else None
            match = pattern.match(got) if got else None
            if match is None:
                where = 'the file ends' if got is None else (
                    'a blank line' if not got else 'got {}'.format(quote(got)))
                raise KRadarFileError(path, "block of line {} ({}): expected its {!r} line, {}{}".format(
                    start, raw, '3d  :' if field == '3d' else field + ':', where,
                    ' (the file is truncated)' if got is None or not got else ''), line=n + 1)
            values[field] = match.group(1)
        ious = _numbers(values['iou'], path, start + 2, 'iou', 0.0, 1.0)
        bev = _numbers(values['bev'], path, start + 3, 'bev', 0.0, 100.0)
        ap3d = _numbers(values['3d'], path, start + 4, '3d', 0.0, 100.0)
        for field, got, line in (('bev', bev, start + 3), ('3d', ap3d, start + 4)):
            if len(got) != len(ious):
                raise KRadarFileError(path, '{} numbers for {} IoU thresholds (line {}): the line is cut or '
                                            'not K-Radar\'s'.format(len(got), len(ious), start + 2),
                                      line=line, field=field)
        conf_text, condition = head.group(1), head.group(2)
        block = Block(start, conf_text, _threshold(conf_text, path, start), condition, values['cls'], ious, bev,
                      ap3d)
        key = (conf_text, condition, block.cls)
        if key in seen:
            notes.append('{}:{} repeats the block of line {} (Conf thr {}, Condition {}, cls {}): K-Radar '
                         'appends to complete_results.txt on every run; the later block is used'.format(
                             path, start, blocks[seen[key]].line, conf_text, condition, block.cls))
            blocks[seen[key]] = block
        else:
            seen[key] = len(blocks)
            blocks.append(block)
        n += 1
    if not blocks:
        raise KRadarFileError(path, "no 'Conf thr: <T>, Condition: <name>' block: not K-Radar's printed results "
                                    "(complete_results.txt)")
    return PrintedResults(path, blocks, notes)


def read_results(path):
    """:class:`PrintedResults` of the file ``path`` (read by ``text.read_text``: bounded, regular files only)."""
    return parse_results(read_text(path, 'results file'), path)


def number_text(value):
    """A number as K-Radar prints it: Python's ``str`` of a float (``0.7``, ``45.45454545454545``)."""
    return str(float(value))


def format_block(conf_text, condition, cls, ious, bev, ap3d):
    """One block exactly as K-Radar writes it (with its blank line)."""
    return ('Conf thr: {}, Condition: {}\ncls: {}\niou: {}\nbev: {}\n3d  :{}\n\n'.format(
        conf_text, condition, cls, ''.join(number_text(v) + ' ' for v in ious),
        ''.join(number_text(v) + ' ' for v in bev), ''.join(number_text(v) + ' ' for v in ap3d)))
