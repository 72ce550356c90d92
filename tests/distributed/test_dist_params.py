"""dist_params: the process-group timeout in seconds or as a timedelta."""
import datetime

import pytest

from kradar_plugin.distributed.dist_params import normalize_dist_params


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
