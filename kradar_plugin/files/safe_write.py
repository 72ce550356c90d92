"""Writing a file of a fixed name into a user's folder (the converter's info pickles, ``--export`` .npz files,
``--plot-dir`` PNGs, ``--json``) without ever writing through a link someone planted there.

The data goes into a fresh temporary file beside the target, created with ``O_CREAT | O_EXCL | O_NOFOLLOW``
under a random name (an existing file or link of that name fails the create; another name is tried), and
is renamed over the target with ``os.replace`` once complete. The rename replaces a link at the target's
name, never the file it points to; a reader sees the old file or the new one, never half of one. On any
failure the temporary file is removed and a :class:`KRadarFileError` names the target.
"""
import binascii
import contextlib
import errno
import os

from .errors import KRadarFileError

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0) | \
    getattr(os, 'O_BINARY', 0)
_TRIES = 100


def _create_temporary(path):
    """(fd, name) of a new, empty file beside ``path``; never opens an existing file or a link."""
    folder, name = os.path.split(os.path.abspath(path))
    for _ in range(_TRIES):
        tmp = os.path.join(folder, '.{}.{}.{}.tmp'.format(name, os.getpid(),
                                                          binascii.hexlify(os.urandom(6)).decode('ascii')))
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
    raise OSError(errno.EEXIST, 'no free temporary name after {} tries'.format(_TRIES))


@contextlib.contextmanager
def open_for_write(path, mode='wb'):
    """A file object (``mode`` 'wb' or 'w', UTF-8 text) whose content replaces ``path`` when the block ends
    without an exception; usable by ``pickle.dump``, ``json.dump``, ``np.savez`` and matplotlib's
    ``savefig(f, format='png')``."""
    if mode not in ('wb', 'w'):
        raise ValueError("mode must be 'wb' or 'w', got {!r}".format(mode))
    if os.path.isdir(path):
        raise KRadarFileError(path, 'cannot write: a folder has this name')
    try:
        fd, tmp = _create_temporary(path)
    except OSError as exc:
        raise KRadarFileError(path, 'cannot write ({})'.format(exc.strerror or exc))
    done = False
    try:
        f = os.fdopen(fd, mode, encoding='utf-8') if mode == 'w' else os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        _remove(tmp)
        raise
    try:
        with f:
            yield f
        os.replace(tmp, path)
        done = True
    except OSError as exc:
        raise KRadarFileError(path, 'cannot write ({})'.format(exc.strerror or exc))
    finally:
        if not done:
            _remove(tmp)


def write_bytes(path, data):
    """Replace ``path`` with ``data`` (bytes) through a fresh temporary file; returns ``path``."""
    with open_for_write(path, 'wb') as f:
        f.write(data)
    return path


def _remove(tmp):
    try:
        os.remove(tmp)
    except OSError:
        pass
