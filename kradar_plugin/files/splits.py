"""Split lists: K-Radar's ``resources/split/{train,test}.txt`` and EchoFusion's ``ImageSets/*.txt``, one
``<seq>,<rdr>_<ldr64>.txt`` a line (K-Radar's have no trailing newline)."""
import collections
import os

from .errors import KRadarFileError
from .text import lines_of

SplitEntry = collections.namedtuple('SplitEntry', 'sequence label line number')
SplitEntry.__doc__ = ("One frame of a split: ``sequence`` ('1'..'58'), ``label`` file name, ``line`` its "
                      "'<seq>,<label>' (the infos' ``label_file``), ``number`` its line in the split file.")


def read_split(path, sequences=None):
    """The :class:`SplitEntry` list of a split file, in file order; ``sequences`` (a set of sequence names)
    keeps only those."""
    out = []
    seen = {}
    for number, line in enumerate(lines_of(path, 'split file'), 1):
        text = line.strip()
        if not text:
            continue
        seq, sep, label = text.partition(',')
        seq, label = seq.strip(), label.strip()
        if not sep or not seq.isdigit() or not label.endswith('.txt') or '/' in label or '\\' in label:
            raise KRadarFileError(path, 'expected "<seq>,<rdr>_<ldr64>.txt"', line=number, field='entry',
                                  value=text)
        seq = str(int(seq))
        key = (seq, label)
        if key in seen:
            raise KRadarFileError(path, 'frame listed twice (first on line {})'.format(seen[key]), line=number,
                                  field='entry', value=text)
        seen[key] = number
        if sequences is None or seq in sequences:
            out.append(SplitEntry(seq, label, '{},{}'.format(seq, label), number))
    return out


def split_files(split_dir):
    """{split name: path} of the ``*.txt`` split lists in ``split_dir`` (sorted by name)."""
    if not os.path.isdir(split_dir):
        raise KRadarFileError(split_dir, 'no such split folder' if not os.path.exists(split_dir)
                              else 'not a folder (give the folder holding train.txt / test.txt)')
    names = sorted(n for n in os.listdir(split_dir) if n.endswith('.txt') and
                   os.path.isfile(os.path.join(split_dir, n)))
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
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError('--sequences {!r}: expected numbers and ranges such as 1-20 or 1,3,5-7'.format(text))
        if first < 1 or last < first:
            raise ValueError('--sequences {!r}: bad range {!r}'.format(text, part))
        out.update(str(k) for k in range(first, last + 1))
    if not out:
        raise ValueError('--sequences {!r}: no sequence'.format(text))
    return out
