"""failfast pieces: rank tags, peer-failure recognition, and an error file the real launcher can read."""
import pytest

ProcessFailure = pytest.importorskip('torch.distributed.elastic.multiprocessing.errors').ProcessFailure

from kradar_plugin.distributed.failfast import is_peer_failure, record_to_error_file, tagged


def test_tagged_prefixes_every_line():
    assert tagged('a\nb\n', '[rank 1/2]') == '[rank 1/2] a\n[rank 1/2] b\n'


def test_peer_failure_recognition():
    assert is_peer_failure(RuntimeError('[../third_party/gloo/gloo/transport/tcp/pair.cc:598] '
                                        'Connection closed by peer [127.0.0.1]:7062'))
    assert not is_peer_failure(RuntimeError('planted inference failure on rank 1'))
    assert not is_peer_failure(ValueError('bad box'))


def test_error_file_is_read_by_torchelastic(tmp_path, monkeypatch):
    path = tmp_path / 'error.json'
    monkeypatch.setenv('TORCHELASTIC_ERROR_FILE', str(path))
    try:
        raise KeyError('missing frame 7')
    except KeyError as exc:
        record_to_error_file(exc, extra='predictions saved in /x/results_epoch_1.pkl')
    failure = ProcessFailure(local_rank=0, pid=123, exitcode=1, error_file=str(path))
    assert failure.timestamp > 0
    assert "KeyError: 'missing frame 7'" in failure.message['message']
    callstack = failure.message['extraInfo']['py_callstack']
    assert 'Traceback (most recent call last)' in callstack
    assert callstack.rstrip().endswith('predictions saved in /x/results_epoch_1.pkl')


def fake_proc(tmp_path, states):
    """A /proc with this process and siblings (children of this process's parent) in the given states."""
    import os
    proc = tmp_path / 'proc'
    pids = [os.getpid()] + [10 ** 7 + i for i in range(len(states) - 1)]
    for pid, state in zip(pids, states):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / 'stat').write_text('{} (python -u x) {} {} 1 1\n'.format(pid, state, os.getppid()))
    (proc / '99999999').mkdir()
    (proc / '99999999' / 'stat').write_text('99999999 (other) S 1 1 1\n')   # not a sibling
    return str(proc)


def test_local_workers_all_alive_reads_the_launchers_children(tmp_path):
    from kradar_plugin.distributed.failfast import local_workers_all_alive, peer_address
    proc = fake_proc(tmp_path, ['R', 'S'])
    assert local_workers_all_alive({'LOCAL_WORLD_SIZE': '2'}, proc) is True      # the lost peer is elsewhere
    assert local_workers_all_alive({'LOCAL_WORLD_SIZE': '3'}, proc) is False     # one local worker is gone
    assert local_workers_all_alive({}, proc) is None                             # srun: cannot tell
    zombie = fake_proc(tmp_path / 'z', ['R', 'Z'])
    assert local_workers_all_alive({'LOCAL_WORLD_SIZE': '2'}, zombie) is False   # killed, not yet reaped
    assert peer_address(RuntimeError('[pair.cc:598] Connection closed by peer [10.0.0.2]:45678')) == \
        '[10.0.0.2]:45678'


def test_an_init_connection_failure_is_recognised_and_diagnosed(monkeypatch):
    """The diagnosis names the address tried (loopback), the host name's addresses, gloo's interface and the
    fix; this machine's own host name and interfaces are read for real."""
    import socket
    from kradar_plugin.distributed import host_network
    from kradar_plugin.distributed.failfast import is_connection_failure
    refused = RuntimeError('[../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.1.1]:3500: '
                           'Connection refused')
    assert is_connection_failure(refused) and not is_connection_failure(ValueError('bad box'))
    assert host_network.address_tried(str(refused)) == '[127.0.1.1]:3500'
    assert host_network.is_loopback('[127.0.1.1]:3500') and host_network.is_loopback('::1')
    assert not host_network.is_loopback('10.250.0.2:29500') and not host_network.is_loopback('cn01')
    environ = {'MASTER_ADDR': '127.0.0.1', 'MASTER_PORT': '29611'}
    text = host_network.init_failure_text(refused, environ)
    name = socket.gethostname()
    assert 'address tried: [127.0.1.1]:3500 (loopback: a peer on another host advertised' in text
    assert 'rendezvous: MASTER_ADDR:MASTER_PORT = 127.0.0.1:29611 (resolves to 127.0.0.1)' in text
    assert "this host: {!r} resolves to {}".format(name, ', '.join(host_network.resolve(name)) or 'nothing') in text
    assert "gloo's interface: GLOO_SOCKET_IFNAME not set" in text
    assert 'fix: ' in text and 'GLOO_SOCKET_IFNAME=' in text and 'MASTER_ADDR must be' in text
    environ['GLOO_SOCKET_IFNAME'] = 'eth7'
    assert "gloo's interface: GLOO_SOCKET_IFNAME=eth7" in host_network.init_failure_text(refused, environ)
    assert ('lo', '127.0.0.1') in host_network.interfaces()
