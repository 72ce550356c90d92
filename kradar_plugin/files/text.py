"""Reading a small text file of K-Radar's (label, calibration, description, split, prediction) with bounded
cost: a size limit, UTF-8 (a BOM and CRLF endings tolerated), and a :class:`KRadarFileError` for anything
else -- a missing file, a directory, binary content."""
import os
import stat

from .errors import KRadarFileError

#: the largest text file read (a K-Radar label file is a few hundred bytes; a split list about 600 KB)
MAX_TEXT_BYTES = 64 << 20


def read_text(path, what='file', limit=MAX_TEXT_BYTES):
    """The file's text without a BOM; ``what`` names the kind of file in errors."""
    try:
        with open(path, 'rb') as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                raise KRadarFileError(path, '{} larger than {} bytes: not a K-Radar {}'.format(what, limit, what))
            # a regular file is read whole (read(n) would allocate n bytes first); anything else up to the limit
            data = f.read() if stat.S_ISREG(info.st_mode) else f.read(limit + 1)
    except IsADirectoryError:
        raise KRadarFileError(path, '{} is a directory'.format(what))
    except FileNotFoundError:
        raise KRadarFileError(path, 'no such {}'.format(what))
    except OSError as exc:
        raise KRadarFileError(path, 'cannot read the {} ({})'.format(what, exc.strerror or exc))
    if len(data) > limit:
        raise KRadarFileError(path, '{} larger than {} bytes: not a K-Radar {}'.format(what, limit, what))
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise KRadarFileError(path, 'not UTF-8 text (byte {:#04x} at offset {}): not a K-Radar {}'.format(
            data[exc.start], exc.start, what))
    if '\x00' in text:
        raise KRadarFileError(path, 'binary content (NUL bytes): not a K-Radar {}'.format(what))
    return text[1:] if text.startswith('\ufeff') else text


def lines_of(path, what='file', limit=MAX_TEXT_BYTES):
    """The file's lines (CRLF, LF or CR endings), without their endings."""
    return read_text(path, what, limit).splitlines()
