"""The ``.npz`` and JSON readers of :mod:`safe_load` (pickles: :mod:`safe_pickle`).

``.npz``: every member must be a ``.npy`` whose header (read here, at most 10,000 bytes, one regular
expression, no ``literal_eval`` of anything unchecked) gives a plain dtype and a shape within the element
limits; then ``np.load(allow_pickle=False)`` reads the arrays (it reads only the bytes the checked shape
needs, so a compressed member cannot inflate). JSON: UTF-8 (a byte-order mark is skipped), nesting checked
before parsing (so ``json`` cannot exhaust the recursion limit), integers of at most 4,300 digits, no
``NaN``/``Infinity``; the parsed content is counted like a pickle's.
"""
import re
import struct
import zipfile

import numpy as np

from . import safe_numpy, safe_pickle

MAX_MEMBERS = 1000
MAX_HEADER = 10000
_HEADER = re.compile(r"^\{\s*'descr':\s*'([<>|=]?[biufcSU][0-9]{1,7})',\s*'fortran_order':\s*(True|False),\s*"
                     r"'shape':\s*\(\s*((?:[0-9]{1,19}\s*,\s*)*(?:[0-9]{1,19})?)\s*\),?\s*\}\s*$")
_MAGIC = b'\x93NUMPY'


class ContentError(ValueError):
    """What is wrong with a file's content (the caller names the file)."""


def npy_header(f, name):
    """(dtype, shape, fortran) of the .npy member ``name`` open in ``f``; ValueError for anything else."""
    magic = f.read(8)
    if len(magic) != 8 or magic[:6] != _MAGIC or magic[6] not in (1, 2, 3) or magic[7] != 0:
        raise ValueError('member {!r} is not a .npy array'.format(name))
    size_format = '<H' if magic[6] == 1 else '<I'
    raw = f.read(struct.calcsize(size_format))
    length = struct.unpack(size_format, raw)[0] if len(raw) == struct.calcsize(size_format) else -1
    if not 0 < length <= MAX_HEADER:
        raise ValueError('member {!r}: a header of {} bytes'.format(name, length))
    text = f.read(length).decode('latin-1')
    match = _HEADER.match(text)
    if match is None:
        raise ValueError('member {!r}: the header {!r} is not a plain array\'s (bool, integer, float, complex or '
                         'fixed-width string dtype, no objects, no structured dtypes)'.format(name, text[:200]))
    dtype = np.dtype(match.group(1))
    if dtype.itemsize == 0 or dtype.itemsize > safe_numpy.MAX_ITEMSIZE:
        raise ValueError('member {!r}: dtype {}'.format(name, dtype))
    shape = tuple(int(d) for d in match.group(3).replace(' ', '').split(',') if d)
    return dtype, shape, match.group(2) == 'True'


def read_npz(path, limits):
    """{member name without .npy: array} of an .npz file, checked as the module docstring says."""
    total = 0
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ContentError('{} members, more than {}'.format(len(infos), MAX_MEMBERS))
            for info in infos:
                if not info.filename.endswith('.npy'):
                    raise ContentError('member {!r} is not a .npy array'.format(info.filename))
                with z.open(info) as f:
                    dtype, shape, _ = npy_header(f, info.filename)
                n = 1
                for d in shape:
                    n *= d
                    if d > limits.max_array_elements or n > limits.max_array_elements:
                        raise ContentError('member {!r} of shape {} holds more than the limit of {:,} elements '
                                           'per array (--max-array-elements raises it)'.format(
                                               info.filename, shape, limits.max_array_elements))
                total += n
                if total > limits.max_elements:
                    raise ContentError('the arrays hold more than the limit of {:,} elements in all '
                                       '(--max-elements raises it)'.format(limits.max_elements))
    except zipfile.BadZipfile as exc:
        raise ContentError('not a readable .npz (zip) file ({})'.format(exc))
    except ContentError:
        raise
    except (ValueError, EOFError, struct.error) as exc:
        raise ContentError('not a readable .npz file ({})'.format(exc))
    with np.load(path, allow_pickle=False) as npz:
        return dict((name, npz[name]) for name in npz.files)


def _depth(text):
    """The deepest nesting of JSON ``text`` (brackets outside strings)."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '', text)
    codes = np.frombuffer(bare.encode('utf-8', 'replace'), dtype=np.uint8)
    step = (codes == ord('[')).astype(np.int32) + (codes == ord('{')) - (codes == ord(']')) - (codes == ord('}'))
    return int(np.cumsum(step).max()) if len(step) else 0


def _bounded_int(text):
    if len(text) > safe_pickle.MAX_NUMBER_TEXT:
        raise ValueError('an integer of {} digits'.format(len(text)))
    return int(text)


def _no_constant(name):
    raise ValueError('{} is not a JSON number'.format(name))


def read_json(path, limits):
    """The content of a JSON file, checked as the module docstring says."""
    import json
    with open(path, 'rb') as f:
        raw = f.read()
    try:
        text = raw.decode('utf-8-sig')
    except UnicodeDecodeError as exc:
        raise ContentError('not UTF-8 text (byte 0x{:02x} at offset {})'.format(raw[exc.start], exc.start))
    depth = _depth(text)
    if depth > safe_pickle.MAX_DEPTH:
        raise ContentError('JSON nested {} deep, more than {}'.format(depth, safe_pickle.MAX_DEPTH))
    try:
        content = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except ValueError as exc:
        raise ContentError('not valid JSON ({})'.format(' '.join(str(exc).split())))
    try:
        return safe_pickle.settle(content, limits.pickle_limits())
    except safe_pickle.RefusedPickleError as exc:
        raise ContentError(str(exc))
