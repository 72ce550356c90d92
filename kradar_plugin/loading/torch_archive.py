"""The two containers ``torch.save`` writes, read without torch and without trusting their offsets.

* **zip** (torch >= 1.6): ``<prefix>/data.pkl`` (the object pickle), ``<prefix>/data/<key>`` (one raw
  record per storage), small text members (``version``, ``byteorder``, ``.data/...``). Every member must be
  stored (not compressed) and lie inside the file; names must be unique and under one prefix. A record is
  read straight from the file into the caller's buffer at the offset its local header gives (one copy, as
  torch's own reader).
* **legacy** (``_use_new_zipfile_serialization=False``, torch < 1.6): four pickles (magic number, protocol
  version, system info, the object), then the pickled list of storage keys, then each storage as an int64
  element count and its bytes, in that order.

Both give the object pickle's bytes and ``read(key, nbytes)``; the caller checks the declared size against
the record before allocating anything (:class:`ArchiveError` names what is missing or inconsistent).
"""
import io
import os
import pickle
import re
import struct
import zipfile

import numpy as np

#: the first pickle of torch's legacy format (torch/serialization.py MAGIC_NUMBER) and its protocol version
LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
LEGACY_PROTOCOL = 1001
#: members a torch zip may hold besides data.pkl and data/<key> (under its prefix)
ZIP_METADATA = ('version', 'byteorder', '.format_version', '.storage_alignment')
MAX_MEMBERS = 1000000
MAX_SMALL_PICKLE = 1 << 16      # the legacy format's magic, protocol and system-info pickles
_KEY = re.compile(r'^[A-Za-z0-9_.\-]{1,64}$')
_LOCAL_HEADER = struct.Struct('<4sHHHHHIIIHH')
_INT64 = struct.Struct('<q')
_CHUNK = 1 << 26


class ArchiveError(ValueError):
    """The container is not a complete torch checkpoint: what is wrong, and where."""


def valid_key(key):
    return type(key) is str and _KEY.match(key) is not None


def read_into(f, offset, out):
    """Fill the writable buffer ``out`` from ``f`` at ``offset`` (raw reads, no intermediate copy);
    ArchiveError when the file ends first."""
    view = memoryview(out).cast('B')
    f.seek(offset)
    done = 0
    total = len(view)
    while done < total:
        n = f.readinto(view[done:done + _CHUNK])
        if not n:
            raise ArchiveError('the file ends {} bytes into a record of {} bytes at offset {}: it is '
                               'truncated'.format(done, total, offset))
        done += n


class ZipArchive(object):
    """A torch zip checkpoint open in ``f`` (binary, seekable) of ``size`` bytes."""

    kind = 'zip'

    def __init__(self, f, size):
        self.f = f
        try:
            archive = zipfile.ZipFile(f)
        except zipfile.BadZipfile as exc:
            raise ArchiveError('a zip archive without its end (central directory): the file is truncated or '
                               'not a torch checkpoint ({})'.format(exc))
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ArchiveError('{} zip members, more than {}'.format(len(infos), MAX_MEMBERS))
        seen = set()
        for info in infos:
            if info.filename in seen:
                raise ArchiveError('the zip member {!r} appears twice'.format(info.filename))
            seen.add(info.filename)
        pickles = [i.filename for i in infos if i.filename.endswith('/data.pkl') and i.filename.count('/') == 1]
        if len(pickles) != 1:
            raise ArchiveError('a zip archive with {} <name>/data.pkl members (a torch checkpoint has one): '
                               'members {}'.format(len(pickles), _names(infos)))
        self.prefix = pickles[0][:-len('data.pkl')]
        self.members = {}
        for info in infos:
            name = info.filename
            rest = name[len(self.prefix):] if name.startswith(self.prefix) else None
            if rest is None or not (rest == 'data.pkl' or rest in ZIP_METADATA or rest.startswith('.data/') or
                                    (rest.startswith('data/') and valid_key(rest[5:]))):
                raise ArchiveError('unexpected zip member {!r} (a torch checkpoint holds {}data.pkl, {}data/<key> '
                                   'and its version records only)'.format(name, self.prefix, self.prefix))
            if info.compress_type != zipfile.ZIP_STORED:
                raise ArchiveError('zip member {!r} is compressed (torch stores its members uncompressed)'.format(
                    name))
            if info.file_size != info.compress_size:
                raise ArchiveError('zip member {!r}: {} bytes stored for {}'.format(
                    name, info.compress_size, info.file_size))
            self.members[name] = info
        self.size = size
        self._offsets = {}
        byteorder = self.small(self.prefix + 'byteorder')
        if byteorder is not None and byteorder.strip() not in (b'little', b''):
            raise ArchiveError('records in {!r} byte order (this loader reads little-endian files)'.format(
                byteorder.strip().decode('latin-1')[:20]))
        self.pickle_name = self.prefix + 'data.pkl'

    def _data_offset(self, name):
        """Where member ``name``'s bytes start, from its local header; checked to end inside the file."""
        hit = self._offsets.get(name)
        if hit is not None:
            return hit
        info = self.members[name]
        head = bytearray(_LOCAL_HEADER.size)
        read_into(self.f, info.header_offset, head)
        fields = _LOCAL_HEADER.unpack(bytes(head))
        if fields[0] != b'PK\x03\x04':
            raise ArchiveError('zip member {!r}: no local header at offset {}'.format(name, info.header_offset))
        start = info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]
        if start + info.file_size > self.size:
            raise ArchiveError('zip member {!r} needs {} bytes at offset {} but the file ends at {}: it is '
                               'truncated'.format(name, info.file_size, start, self.size))
        self._offsets[name] = start
        return start

    def small(self, name):
        """The bytes of a small member (None when absent)."""
        info = self.members.get(name)
        if info is None:
            return None
        if info.file_size > MAX_SMALL_PICKLE:
            raise ArchiveError('zip member {!r} has {} bytes'.format(name, info.file_size))
        out = bytearray(info.file_size)
        read_into(self.f, self._data_offset(name), out)
        return bytes(out)

    def object_pickle(self):
        """(file object over the object pickle's bytes, where it is named in errors)."""
        info = self.members[self.pickle_name]
        data = bytearray(info.file_size)
        read_into(self.f, self._data_offset(self.pickle_name), data)
        return io.BytesIO(data), self.pickle_name

    def record_size(self, key):
        info = self.members.get(self.prefix + 'data/' + key)
        if info is None:
            raise ArchiveError('the storage record {}data/{} is missing'.format(self.prefix, key))
        return info.file_size

    def where(self, key):
        return '{}data/{}'.format(self.prefix, key)

    def read(self, key, out):
        """Fill ``out`` (its size checked by the caller against :meth:`record_size`) with record ``key``."""
        read_into(self.f, self._data_offset(self.prefix + 'data/' + key), out)

    def finish(self, keys):
        pass


class LegacyArchive(object):
    """A legacy-format checkpoint open in ``f``: the small pickles are checked here; :meth:`object_pickle`
    gives the file itself at the object pickle; after it, :meth:`finish` reads the key list and locates every
    storage."""

    kind = 'legacy'

    def __init__(self, f, size):
        self.f = f
        self.size = size
        # the pickles through a buffered reader of the same file (the unpickler then reads in large chunks, not
        # opcode by opcode); the records straight from ``f`` at their offsets
        stream = io.open(f.fileno(), 'rb', buffering=1 << 20, closefd=False) if isinstance(f, io.FileIO) else f
        self.stream = f = stream
        f.seek(0)
        magic = _small_pickle(f, 'the magic number')
        if magic != LEGACY_MAGIC:
            raise ArchiveError('neither a torch zip checkpoint nor a legacy one: the first pickle holds {!r}, not '
                               "torch's magic number (a plain pickle named .pth?)".format(_short(magic)))
        version = _small_pickle(f, 'the protocol version')
        if version != LEGACY_PROTOCOL:
            raise ArchiveError('legacy checkpoint of protocol version {!r} (torch writes {})'.format(
                _short(version), LEGACY_PROTOCOL))
        info = _small_pickle(f, 'the system info')
        if not isinstance(info, dict) or info.get('little_endian') is not True:
            raise ArchiveError('legacy checkpoint system info {!r}: this loader reads little-endian files'.format(
                _short(info)))
        self.pickle_name = 'the object pickle at byte {}'.format(f.tell())
        self.offsets = None
        self.declared = {}

    def object_pickle(self):
        return self.stream, self.pickle_name

    def where(self, key):
        return 'storage {!r} of the legacy records'.format(key)

    def record_size(self, key):
        return None             # known after finish(): the legacy records follow the object pickle

    def finish(self, expected):
        """After the object pickle: read the key list and each record's element count; ``expected``:
        {key: (element count, item size)} declared by the object pickle. Returns {key: (offset, nbytes)}."""
        f = self.stream
        try:
            keys = _KeyList(f).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
            raise ArchiveError('the storage key list after the object pickle is missing or damaged ({}: {}): the '
                               'file is truncated'.format(type(exc).__name__, exc))
        if type(keys) is not list or not all(valid_key(k) for k in keys) or len(set(keys)) != len(keys):
            raise ArchiveError('the storage key list is not a list of distinct keys')
        if set(keys) != set(expected):
            raise ArchiveError('the storage key list names {} storages, the object pickle {}'.format(
                len(keys), len(expected)))
        offset = f.tell()
        offsets = {}
        head = bytearray(8)
        for key in keys:
            numel, itemsize = expected[key]
            read_into(self.f, offset, head)
            count = _INT64.unpack(bytes(head))[0]
            if count != numel:
                raise ArchiveError('{}: the record holds {} elements, the object pickle declares {}'.format(
                    self.where(key), count, numel))
            nbytes = numel * itemsize
            if offset + 8 + nbytes > self.size:
                raise ArchiveError('{} needs {} bytes at offset {} but the file ends at {}: it is '
                                   'truncated'.format(self.where(key), nbytes, offset + 8, self.size))
            offsets[key] = (offset + 8, nbytes)
            offset += 8 + nbytes
        self.offsets = offsets
        return offsets

    def read(self, key, out):
        read_into(self.f, self.offsets[key][0], out)


class _KeyList(pickle.Unpickler):
    """The legacy format's key list and small pickles: plain values only."""

    def find_class(self, module, name):
        raise ArchiveError('names the global {}.{}'.format(module, name))

    def persistent_load(self, pid):
        raise ArchiveError('the legacy format\'s header pickles reference a storage')


def _small_pickle(f, what):
    start = f.tell()
    try:
        value = _KeyList(f).load()
    except ArchiveError as exc:
        raise ArchiveError('neither a torch zip checkpoint nor a legacy one: {} at byte {} {} (a plain pickle named '
                           '.pth? nothing it names was imported or run)'.format(what, start, exc))
    except Exception as exc:  # noqa: BLE001 - any damage: the file is not a legacy checkpoint
        raise ArchiveError('neither a torch zip checkpoint nor a legacy one: {} at byte {} does not unpickle '
                           '({}: {})'.format(what, start, type(exc).__name__, _short(exc)))
    if f.tell() - start > MAX_SMALL_PICKLE:
        raise ArchiveError('{} takes {} bytes'.format(what, f.tell() - start))
    return value


def _short(value):
    text = repr(value) if not isinstance(value, Exception) else str(value)
    return text if len(text) <= 80 else text[:77] + '...'


def _names(infos):
    names = [i.filename for i in infos[:5]]
    return ', '.join(names) + (', ...' if len(infos) > 5 else '')


def open_archive(f):
    """The archive in the binary, seekable file ``f``: :class:`ZipArchive` or :class:`LegacyArchive`."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(0)
    if size == 0:
        raise ArchiveError('the file is empty (0 bytes): not a checkpoint')
    head = bytearray(4)
    n = f.readinto(head)
    f.seek(0)
    if bytes(head[:n]).startswith(b'PK'):
        return ZipArchive(f, size)
    if size < 262 + 512 or not _is_tar(f):
        return LegacyArchive(f, size)
    raise ArchiveError('a tar archive: the format of torch < 0.4, not supported (re-save it with a recent torch)')


def _is_tar(f):
    head = bytearray(262)
    f.seek(0)
    n = f.readinto(head)
    f.seek(0)
    return n == 262 and bytes(head[257:262]) == b'ustar'


def empty_buffer(nbytes):
    """A writable uint8 array of ``nbytes`` (numpy aligns it for every dtype)."""
    return np.empty(nbytes, dtype=np.uint8)
