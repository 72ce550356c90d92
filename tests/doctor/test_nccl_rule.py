"""kradar-doctor's nccl-failfast check: a NCCL launch whose ranks would wait for a lost rank for ever (async
error handling off) fails, one where the launcher's environment does not say warns, and gloo or no config
skips. Judged on given facts (no probing); the facts' probe reads the environment."""
from kradar_plugin.doctor.probes.system import probe_nccl_env

from .helpers import judge, result


def nccl(env=None, timeout=5400, backend='nccl', torch='1.10.0'):
    extra = {'config': 'c.py', 'dist-backend': backend, 'nccl-env': env or {}}
    if timeout:
        extra['dist-timeout'] = timeout
    return result(judge('torch={}'.format(torch), **extra), 'nccl-failfast')


def test_async_error_handling_off_fails_and_names_the_variable():
    r = nccl({'NCCL_ASYNC_ERROR_HANDLING': '0'})
    assert r.status == 'FAIL' and 'NCCL_ASYNC_ERROR_HANDLING=0' in r.reason and 'hang' in r.reason
    assert 'TORCH_NCCL_ASYNC_ERROR_HANDLING=1' in r.fix


def test_unset_warns_with_the_timeout_it_would_ignore():
    r = nccl()
    assert r.status == 'WARN' and 'the 5400 s timeout of dist_params' in r.reason and 'srun' in r.reason
    assert 'default then decides' in nccl(torch='2.4.0').reason


def test_set_passes_and_an_unset_timeout_warns():
    assert nccl({'TORCH_NCCL_ASYNC_ERROR_HANDLING': '1'}).status == 'OK'
    assert nccl({'NCCL_BLOCKING_WAIT': '1'}).status == 'OK'
    r = nccl({'NCCL_ASYNC_ERROR_HANDLING': '1'}, timeout=None)
    assert r.status == 'WARN' and 'default 30 min' in r.reason


def test_gloo_or_no_config_skips():
    assert nccl(backend='gloo').status == 'SKIP'
    assert result(judge('torch=2.0.1'), 'nccl-failfast').status == 'SKIP'


def test_probe_reads_only_the_error_handling_variables():
    env = {'NCCL_ASYNC_ERROR_HANDLING': '1', 'NCCL_DEBUG': 'INFO', 'TORCH_NCCL_BLOCKING_WAIT': '0'}
    assert probe_nccl_env(env) == {'NCCL_ASYNC_ERROR_HANDLING': '1', 'TORCH_NCCL_BLOCKING_WAIT': '0'}
