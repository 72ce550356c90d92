"""What the real K-Radar files hold beyond their format's letter, counted while reading: each quirk is read
as K-Radar's own loader reads it, and the converter, relabelling and the audit end with one summary of what
they met (a count per quirk and its first places); ``--strict`` makes any of them an error.

Measured on the real releases (34,994 label files per version): v2.1 carries the visibility values ``LL``,
``LR`` and ``l``, the classes ``Pedestrian Group`` and ``Bicycle Group``, yaws from -329.9 to 457.4 degrees,
4,307 header-only frames, 4,173 files without a final newline and 597 with trailing spaces; v2.0 glues the
first object onto the header line in 597 files.
"""
import collections

#: quirk key -> (what was met, what was done); in the summary's order
KINDS = collections.OrderedDict([
    ('visibility', ('objects with visibility outside R/L/L1', 'kept as written; --only-r drops them')),
    ('class', ("objects of a class outside the benchmark's five (Sedan, Bus or Truck, Motorcycle, Bicycle, "
               'Pedestrian)', "kept; the evaluation's class filter drops them")),
    ('yaw', ('objects with yaw outside [-180, 180] degrees',
             "kept as written, as K-Radar's loader does (rotation_y = yaw * pi / 180)")),
    ('split_err', ('object lines of another field count or with non-integer ids',
                   "skipped, as K-Radar's loader skips them ('* split err')")),
    ('bev_only', ("'#' object lines (BEV-only boxes)", 'skipped, as every K-Radar loader does')),
    ('glued_header', ('files whose first object shares the header line',
                      "split at the second '*', as K-Radar's loader does")),
    ('header_only', ('header-only frames (no object)', 'kept as frames without objects')),
    ('no_final_newline', ('files without a final newline', 'read as usual')),
    ('trailing_space', ('files with trailing spaces', 'ignored')),
    ('crlf', ('files with CRLF line endings', 'read as usual')),
    ('blank_line', ('blank lines inside a file', 'skipped')),
    ('split_comment', ("'#' comment lines in split lists", 'skipped')),
    ('split_duplicate', ('frames listed twice in one split list', "kept once, as K-Radar's dictionary does")),
    ('split_overlap', ('frames listed in two split lists of one --split-dir (e.g. train/test overlap)',
                       'kept in both')),
])
#: the quirks that are warnings even without --strict (the others are normal in the real releases)
WARN = ('split_duplicate', 'split_overlap')
#: how many places of each quirk are kept (and printed: the first three)
KEEP = 20
#: how many distinct values of a quirk are counted one by one, and printed; the characters printed of each
MAX_VALUES, SHOWN_VALUES, VALUE_CHARS = 100, 8, 40
OTHER = '(other values)'


def breakdown_text(counts):
    """'LL: 1, LR: 1, l: 1' of {value: count}: at most :data:`SHOWN_VALUES` values (the most frequent), each cut
    to :data:`VALUE_CHARS` characters, so a summary line stays short whatever the files hold."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    shown = ['{}: {}'.format(cut(k), v) for k, v in items[:SHOWN_VALUES]]
    if len(items) > SHOWN_VALUES:
        shown.append('{} more values: {}'.format(len(items) - SHOWN_VALUES, sum(v for _, v in items[SHOWN_VALUES:])))
    return ', '.join(shown)


def cut(value):
    """``value`` as text of at most :data:`VALUE_CHARS` characters."""
    text = str(value)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 3] + '...'


class Quirks(object):
    """Counts of each quirk (:data:`KINDS`) and its first :data:`KEEP` places ('<seq>/<file>:<line>')."""

    def __init__(self):
        self.counts, self.places, self.detail = collections.OrderedDict(), {}, {}

    def add(self, kind, place, count=1):
        if kind not in KINDS:
            raise KeyError(kind)
        self.counts[kind] = self.counts.get(kind, 0) + count
        places = self.places.setdefault(kind, [])
        if len(places) < KEEP:
            places.append(place)

    def add_file(self, where, found):
        """The (kind, line or None, value or None) list one reader found in the file ``where`` (e.g.
        '11/00446_00413.txt'); the values (a visibility value, a class name) are counted per value."""
        for kind, line, value in found:
            self.add(kind, where if line is None else '{}:{}'.format(where, line))
            if value is not None:
                self.note(kind, value)

    def note(self, kind, key, count=1):
        """A breakdown of a quirk's count (e.g. the visibility value or the class name); past
        :data:`MAX_VALUES` distinct values the rest count as 'other values' (files others hand over may hold
        any number of odd names)."""
        per = self.detail.setdefault(kind, collections.OrderedDict())
        if key not in per and len(per) >= MAX_VALUES:
            key = OTHER
        per[key] = per.get(key, 0) + count

    def __bool__(self):
        return bool(self.counts)

    def ordered(self):
        return [k for k in KINDS if k in self.counts]

    def line(self, kind, first=3):
        """One summary line, e.g. "3 objects with visibility outside R/L/L1 (kept as written; --only-r drops
        them): 11/00280_00247.txt:10, ..."."""
        met, done = KINDS[kind]
        count = self.counts[kind]
        detail = self.detail.get(kind)
        breakdown = ' [{}]'.format(breakdown_text(detail)) if detail else ''
        places = self.places.get(kind, [])
        more = ', ...' if count > len(places[:first]) else ''
        return '{} {}{} ({}): {}{}'.format(count, met, breakdown, done, ', '.join(places[:first]), more)

    def lines(self):
        return [self.line(k) for k in self.ordered()]

    def as_dict(self):
        return collections.OrderedDict(
            (k, {'count': self.counts[k], 'what': KINDS[k][0], 'handling': KINDS[k][1],
                 'first': list(self.places.get(k, [])), 'by_value': dict(self.detail.get(k, {}))})
            for k in self.ordered())

    def merge(self, other):
        for kind in other.ordered():
            self.counts[kind] = self.counts.get(kind, 0) + other.counts[kind]
            mine = self.places.setdefault(kind, [])
            mine.extend(other.places.get(kind, [])[:max(0, KEEP - len(mine))])
            for key, value in other.detail.get(kind, {}).items():
                self.note(kind, key, value)
        return self
