"""failfast pieces: rank tags, peer-failure recognition, and an error file the real launcher can read."""
from torch.distributed.elastic.multiprocessing.errors import ProcessFailure

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
