"""Reading a small text file of K-Radar's (label, calibration, description, split, prediction) with bounded
cost: regular files only, a size limit per kind of file, UTF-8 (a BOM and CRLF endings tolerated), and a
:class:`KRadarFileError` for anything else.

Files come from others: a FIFO must not hang the reader, ``/dev/zero`` must not be read. The file is opened
without blocking (``O_NONBLOCK``: opening a FIFO returns at once; ``O_NOCTTY``: a terminal never becomes
ours) and its type is checked with ``fstat`` on the open descriptor before a byte is read; symbolic links
are followed (dataset trees link sequence folders from other disks), their target is what is checked.
"""
import errno
import os
import stat

from .errors import KRadarFileError

#: the largest text file read when its kind has no entry in :data:`LIMITS`
MAX_TEXT_BYTES = 64 << 20

#: size limits by kind of file (``what``), each many times the largest real file of that kind: a label file holds
#: a few hundred bytes, K-Radar's split lists about 600 KB, calibration and description files a line or two, a
#: prediction-folder file a line per object (a few hundred at most), ``val.txt`` a six-digit id a line,
#: ``complete_results.txt`` about 100 bytes per condition and class (under 16 KB a run)
LIMITS = {
    'label file': 32 << 20,
    'split file': 8 << 20,
    'calibration file': 64 << 10,
    'description file': 64 << 10,
    'frame list': 16 << 20,
    'GT file': 8 << 20,
    'prediction file': 8 << 20,
    'results file': 4 << 20,
}

_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO (named pipe)'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'), (stat.S_ISSOCK, 'a socket'))
_FLAGS = os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOCTTY', 0) | getattr(os, 'O_CLOEXEC', 0) | \
    getattr(os, 'O_BINARY', 0)


def kind_of(mode):
    """'a FIFO (named pipe)', 'a directory', ... for a ``st_mode`` that is not a regular file, else None."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else 'not a regular file'


def read_bytes(path, what='file', limit=None):
    """The bytes of the regular file ``path`` (at most the limit of ``what``); never blocks, never reads a
    FIFO, device, socket or directory."""
    limit = limit if limit is not None else LIMITS.get(what, MAX_TEXT_BYTES)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise _open_error(path, what, exc)
    try:
        info = os.fstat(fd)
        other = kind_of(info.st_mode)
        if other:
            raise _not_regular(path, what, other)
        if info.st_size > limit:
            raise _too_large(path, what, limit)
        chunks, size = [], 0
        while True:      # st_size is a hint only (/proc files report 0): read to EOF, never past the limit
            want = info.st_size - size + 1 if size < info.st_size else 1 << 16
            chunk = os.read(fd, min(want, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise _too_large(path, what, limit)
    except OSError as exc:
        raise KRadarFileError(path, 'cannot read the {} ({})'.format(what, exc.strerror or exc))
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b''.join(chunks)


def read_text(path, what='file', limit=None):
    """The file's text without a BOM; ``what`` names the kind of file in errors and chooses the size limit
    (:data:`LIMITS`) unless ``limit`` is given."""
    data = read_bytes(path, what, limit)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise KRadarFileError(path, 'not UTF-8 text (byte {:#04x} at offset {}): not a K-Radar {}'.format(
            data[exc.start], exc.start, what))
    if '\x00' in text:
        raise KRadarFileError(path, 'binary content (NUL bytes): not a K-Radar {}'.format(what))
    return text[1:] if text.startswith('\ufeff') else text


def lines_of(path, what='file', limit=None):
    """The file's lines (CRLF, LF or CR endings), without their endings."""
    return read_text(path, what, limit).splitlines()


def split_fields(text, sep, most, path, line, what='fields'):
    """``text.split(sep)`` of at most ``most`` parts, else a :class:`KRadarFileError` naming ``path``:``line``:
    a line of millions of separators is refused without building millions of strings."""
    parts = text.split(sep, most)
    if len(parts) > most:
        raise KRadarFileError(path, 'more than {} {} on this line ({:,} characters)'.format(most, what, len(text)),
                              line=line)
    return parts


def _too_large(path, what, limit):
    return KRadarFileError(path, '{} larger than {:,} bytes: not a K-Radar {}'.format(what, limit, what))


def _not_regular(path, what, kind):
    return KRadarFileError(path, '{} is {}, not a regular file: refused (only regular files are read)'.format(
        what, kind))


def _open_error(path, what, exc):
    if exc.errno == errno.ENOENT:
        return KRadarFileError(path, 'no such {}'.format(what))
    if exc.errno in (errno.ENXIO, errno.EISDIR, errno.ENODEV, errno.EOPNOTSUPP):   # a socket, a device
        try:
            kind = kind_of(os.stat(path).st_mode)
        except OSError:
            kind = None
        if kind:
            return _not_regular(path, what, kind)
    return KRadarFileError(path, 'cannot read the {} ({})'.format(what, exc.strerror or exc))
