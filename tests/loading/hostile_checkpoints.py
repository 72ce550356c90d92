"""Hostile checkpoints, written here byte by byte (no torch needed), and the child that loads one.

The object pickles are assembled from pickle opcodes (:class:`Ops`) so that they can name torch's globals and
storage ids without torch, as an attacker's file would; the containers are torch's: a zip with
``archive/data.pkl`` and ``archive/data/<key>`` records, or the legacy sequence of pickles and raw storages.

:func:`load_in_child` forks, limits the child's address space (``RLIMIT_AS``: its size plus ``memory``) and
time (``SIGALRM``), loads the file with ``load_checkpoint`` there and sends back one line; the parent waits at
most ``seconds`` + a grace.
"""
import io
import os
import pickle
import signal
import struct
import sys
import time
import zipfile

LEGACY_MAGIC = 0x1950a86a20f9469cfc6c


class Ops(object):
    """A protocol-2 pickle built opcode by opcode."""

    def __init__(self):
        self.out = bytearray(b'\x80\x02')

    def glob(self, module, name):
        self.out += b'c' + module.encode() + b'\n' + name.encode() + b'\n'
        return self

    def text(self, value):
        data = value.encode('utf-8')
        self.out += b'X' + struct.pack('<I', len(data)) + data
        return self

    def int(self, value):
        if 0 <= value < 256:
            self.out += b'K' + bytes([value])
        elif -2 ** 31 <= value < 2 ** 31:
            self.out += b'J' + struct.pack('<i', value)
        else:
            data = value.to_bytes((value.bit_length() + 8) // 8, 'little', signed=True)
            self.out += b'\x8a' + bytes([len(data)]) + data
        return self

    def raw(self, data):
        self.out += data
        return self

    def mark(self):
        return self.raw(b'(')

    def tuple(self):
        return self.raw(b't')

    def reduce(self):
        return self.raw(b'R')

    def bytes(self):
        self.out += b'.'
        return bytes(self.out)


def storage_tensor(ops, key, numel, size, stride=None, storage='FloatStorage', offset=0):
    """``torch._utils._rebuild_tensor_v2(<storage key>, offset, size, stride, False, OrderedDict())``."""
    stride = stride or tuple(int(_prod(size[i + 1:])) for i in range(len(size)))
    ops.glob('torch._utils', '_rebuild_tensor_v2').mark()
    ops.mark().text('storage').glob('torch', storage).text(key).text('cpu').int(numel).tuple().raw(b'Q')
    ops.int(offset).mark()
    for d in size:
        ops.int(d)
    ops.tuple().mark()
    for s in stride:
        ops.int(s)
    ops.tuple().raw(b'\x89').glob('collections', 'OrderedDict').raw(b')').reduce().tuple().reduce()
    return ops


def _prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def dict_pickle(items):
    """{key: value} where each value is a callable writing its opcodes onto an Ops."""
    ops = Ops().raw(b'}').mark()
    for key, write in items:
        ops.text(key)
        write(ops)
    return ops.raw(b'u').bytes()


def payload(kind, marker):
    """Opcodes of a call that creates ``marker``: os.system, builtins.eval or builtins.exec."""
    def write(ops):
        if kind == 'system':
            ops.glob('os', 'system').mark().text('touch {}'.format(marker)).tuple().reduce()
        else:
            ops.glob('builtins', kind).mark().text("open({!r}, 'w').close()".format(marker)).tuple().reduce()
    return write


def write_zip(path, data_pkl, records=(), extra=(), prefix='archive/'):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as z:
        z.writestr(prefix + 'data.pkl', data_pkl)
        z.writestr(prefix + 'version', '3\n')
        for key, data in records:
            z.writestr(prefix + 'data/' + key, data)
        for name, data in extra:
            z.writestr(name, data)
    return path


def write_legacy(path, object_pickle, storages=()):
    """torch's legacy layout: magic, protocol, system info, ``object_pickle``, the key list, then each
    storage as an int64 element count and its bytes (``storages``: [(key, count, data)])."""
    with open(path, 'wb') as f:
        for value in (LEGACY_MAGIC, 1001, dict(protocol_version=1001, little_endian=True,
                                               type_sizes=dict(short=2, int=4, long=4))):
            pickle.dump(value, f, protocol=2)
        f.write(object_pickle)
        pickle.dump([key for key, _, _ in storages], f, protocol=2)
        for _, count, data in storages:
            f.write(struct.pack('<q', count) + data)
    return path


def hostile_files(folder, marker):
    """{case: (path, what its one error line must say)} of the issue's hostile checkpoints."""
    j = os.path.join
    floats = struct.pack('<4f', 1, 2, 3, 4)

    def meta_payload(kind):
        def meta(ops):
            ops.raw(b'}').mark().text('hook')
            payload(kind, marker)(ops)
            ops.raw(b'u')
        return dict_pickle([('state_dict', lambda ops: ops.raw(b'}')), ('meta', meta)])

    cases = {
        'system-in-meta': (write_zip(j(folder, 'system.pth'), meta_payload('system')),
                           'refused to load the global os.system (met in archive/data.pkl near byte'),
        'eval-in-meta': (write_zip(j(folder, 'eval.pth'), meta_payload('eval')),
                         'refused to load the global builtins.eval'),
        'exec-in-legacy': (write_legacy(j(folder, 'legacy.pth'), meta_payload('exec')),
                           'refused to load the global builtins.exec (met in the object pickle at byte'),
        'plain-pickle-named-pth': (_plain_pickle(j(folder, 'plain.pth'), marker),
                                   'the magic number at byte 0 names the global os.system (a plain pickle named '
                                   '.pth?'),
        'storage-8GiB-on-16-bytes': (write_zip(j(folder, 'huge.pth'), dict_pickle([(
            'w', lambda o: storage_tensor(o, '0', 2 ** 31, (2 ** 31,)))]), records=[('0', floats)]),
            'storage 0 is declared as 2147483648 float32 elements (8589934592 bytes) but its record '
            'archive/data/0 holds 16 bytes'),
        'legacy-storage-8GiB': (write_legacy(j(folder, 'huge_legacy.pth'), _legacy_tensor_pickle(2 ** 31),
                                             [('0', 2 ** 31, floats)]),
                                'needs 8589934592 bytes at offset'),
        'tensor-outside-its-storage': (write_zip(j(folder, 'outside.pth'), dict_pickle([(
            'w', lambda o: storage_tensor(o, '0', 4, (100,)))]), records=[('0', floats)]),
            'reaches element 100 of storage 0'),
        'empty': (_write(j(folder, 'empty.pth'), b''), 'the file is empty (0 bytes)'),
        'truncated-zip': (_truncated(j(folder, 'cut.pth'), write_zip(j(folder, 'whole.pth'), dict_pickle([(
            'w', lambda o: storage_tensor(o, '0', 4, (4,)))]), records=[('0', floats * 64)])),
            'without its end (central directory): the file is truncated'),
        'truncated-legacy': (_truncated(j(folder, 'cut_legacy.pth'), write_legacy(
            j(folder, 'whole_legacy.pth'), _legacy_tensor_pickle(256), [('0', 256, floats * 64)]), keep=0.9),
            'needs 1024 bytes at offset'),
        'deeply-nested': (write_zip(j(folder, 'deep.pth'), Ops().raw(b']' * 100000 + b'a' * 99999).bytes()),
                          'nested more than 32 deep'),
        'billion-references': (write_zip(j(folder, 'laughs.pth'), _laughs()),
                               'more than the limit of 50,000,000 elements'),
        'extra-member': (write_zip(j(folder, 'extra.pth'), dict_pickle([]), extra=[('archive/run_me.py', 'x')]),
                         "unexpected zip member 'archive/run_me.py'"),
        'duplicate-member': (_duplicate(j(folder, 'dup.pth')), "the zip member 'archive/data.pkl' appears twice"),
    }
    return cases


def weights_with_payload(path, marker, key='linear.bias'):
    """A zip checkpoint with a real one-float ``state_dict`` entry ``key`` and an os.system call creating
    ``marker`` in its ``meta``: what a shared ``epoch_12.pth`` with a payload looks like."""
    def weights(ops):
        ops.raw(b'}').mark().text(key)
        storage_tensor(ops, '0', 1, (1,))
        ops.raw(b'u')
    return write_zip(path, dict_pickle([('state_dict', weights), ('meta', payload('system', marker))]),
                     records=[('0', b'\x00' * 4)])


def _legacy_tensor_pickle(numel):
    """The legacy object pickle of {'w': <tensor of ``numel`` floats over storage '0'>}."""
    ops = Ops().raw(b'}').mark().text('w')
    ops.glob('torch._utils', '_rebuild_tensor_v2').mark()
    ops.mark().text('storage').glob('torch', 'FloatStorage').text('0').text('cpu').int(numel).raw(b'N').tuple()
    ops.raw(b'Q').int(0).mark().int(numel).tuple().mark().int(1).tuple().raw(b'\x89')
    ops.glob('collections', 'OrderedDict').raw(b')').reduce().tuple().reduce().raw(b'u')
    return ops.bytes()


def _laughs():
    """Ten nested lists, each ten references to the one below: 10**10 elements when expanded."""
    ops = Ops().raw(b']q\x00')
    for level in range(1, 11):
        ops.raw(b']').mark()
        for _ in range(10):
            ops.raw(b'h' + bytes([level - 1]))
        ops.raw(b'e').raw(b'q' + bytes([level]))
    return ops.bytes()


def _plain_pickle(path, marker):
    return _write(path, dict_pickle([('x', payload('system', marker))]))


def _write(path, data):
    with open(path, 'wb') as f:
        f.write(data)
    return path


def _truncated(path, whole, keep=0.5):
    with open(whole, 'rb') as f:
        data = f.read()
    return _write(path, data[:int(len(data) * keep)])


def _duplicate(path):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')          # zipfile warns about the duplicate name it writes
        with zipfile.ZipFile(path, 'w') as z:
            z.writestr('archive/data.pkl', dict_pickle([]))
            z.writestr('archive/data.pkl', dict_pickle([]))
    return path


def _vm_bytes():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmSize:'):
                return int(line.split()[1]) * 1024
    return 0


def load_in_child(path, memory=256 << 20, seconds=60, environ=None, loader=None):
    """(exit status, stdout lines) of loading ``path`` in a forked child limited to its current address space
    + ``memory`` bytes and ``seconds``: status 0 and ['LOADED <type>'] or status 3 and the error's lines."""
    import resource
    try:
        import torch  # noqa: F401 - imported before the limit (its libraries map gigabytes of address space)
    except ImportError:
        pass
    from kradar_plugin.loading import checkpoint_pickle, safe_checkpoint, tensor_builder  # noqa: F401
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child: never returns
        code = 4
        try:
            os.close(read_end)
            out = os.fdopen(write_end, 'w')
            if environ:
                os.environ.update(environ)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            resource.setrlimit(resource.RLIMIT_AS, (_vm_bytes() + memory, resource.RLIM_INFINITY))
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(seconds)
            try:
                if loader is None:
                    from kradar_plugin.loading import load_checkpoint as loader
                obj = loader(path)
                out.write('LOADED {}\n'.format(type(obj).__name__))
                code = 0
            except BaseException as exc:  # noqa: BLE001 - the one line the user would see
                out.write('{}: {}\n'.format(type(exc).__name__, exc))
                code = 3
            out.flush()
        finally:
            os._exit(code)
    os.close(write_end)
    deadline = time.time() + seconds + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError('the child loading {} did not end in {} s'.format(path, seconds + 30))
        time.sleep(0.02)
    with io.open(read_end, 'r') as f:
        lines = f.read().splitlines()
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return code, lines


if __name__ == '__main__':      # python -m tests.loading.hostile_checkpoints FOLDER: write them for a look
    for name, (path, _) in sorted(hostile_files(sys.argv[1], os.path.join(sys.argv[1], 'ran')).items()):
        print(name, path)
