"""Eval switch settings from config values and environment variables; dist_params timeout."""
import datetime

import pytest

from kradar_plugin.distributed.dist_params import normalize_dist_params
from kradar_plugin.distributed.eval_mode import env_requests_switch, resolve


def test_config_values_without_environment():
    assert resolve('only', None, environ={}) == ('only', None)
    assert resolve('first', 5, environ={}) == ('first', 5)
    assert resolve('off', None, environ={}) == ('off', None)


def test_environment_overrides_config():
    assert resolve('off', None, environ={'KRADAR_EVAL_ONLY': '1'}) == ('only', None)
    assert resolve('off', None, environ={'KRADAR_EVAL_FIRST': 'true'}) == ('first', None)
    assert resolve('only', None, environ={'KRADAR_EVAL_ONLY': '0'}) == ('off', None)
    assert resolve('only', 3, environ={'KRADAR_EVAL_SAMPLES': ' 12 '}) == ('only', 12)


def test_bad_values_name_the_source():
    with pytest.raises(ValueError, match='exclusive'):
        resolve('off', None, environ={'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_FIRST': '1'})
    with pytest.raises(ValueError, match=r"KRADAR_EVAL_ONLY='maybe'"):
        resolve('off', None, environ={'KRADAR_EVAL_ONLY': 'maybe'})
    with pytest.raises(ValueError, match=r"KRADAR_EVAL_SAMPLES='-2'"):
        resolve('off', None, environ={'KRADAR_EVAL_SAMPLES': '-2'})
    with pytest.raises(ValueError, match='eval_mode must be one of'):
        resolve('sometimes', None, environ={})
    with pytest.raises(ValueError, match='eval_samples=0'):
        resolve('only', 0, environ={})


def test_env_requests_switch():
    assert not env_requests_switch({})
    assert not env_requests_switch({'KRADAR_EVAL_ONLY': '0'})
    assert env_requests_switch({'KRADAR_EVAL_ONLY': '1'})
    assert env_requests_switch({'KRADAR_EVAL_SAMPLES': '4'})


def test_timeout_seconds_become_timedelta():
    params = normalize_dist_params(dict(backend='gloo', timeout=90))
    assert params == dict(backend='gloo', timeout=datetime.timedelta(seconds=90))
    td = datetime.timedelta(minutes=3)
    assert normalize_dist_params(dict(timeout=td))['timeout'] is td
    assert normalize_dist_params(None) == {}
    with pytest.raises(ValueError, match='dist_params.timeout must be > 0'):
        normalize_dist_params(dict(timeout=0))
    with pytest.raises(ValueError, match="got '30'"):
        normalize_dist_params(dict(timeout='30'))
