"""``dist_params`` from a config, made acceptable to ``torch.distributed.init_process_group``.

Configs say ``dist_params = dict(backend='nccl', timeout=5400)`` in seconds (as mmengine's ``dist_cfg``
does); torch wants a ``datetime.timedelta`` and fails with an obscure error on a number.
"""
import datetime
import numbers


def normalize_dist_params(dist_params):
    """Copy of ``dist_params`` with a numeric ``timeout`` (seconds) converted to ``timedelta``.

    Raises ValueError naming the field for a timeout that is neither a positive number nor a timedelta.
    """
    params = dict(dist_params or {})
    timeout = params.get('timeout', None)
    if timeout is None or isinstance(timeout, datetime.timedelta):
        return params
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise ValueError('dist_params.timeout must be a number of seconds or a datetime.timedelta, '
                         'got {!r}'.format(timeout))
    if not timeout > 0:
        raise ValueError('dist_params.timeout must be > 0 seconds, got {!r}'.format(timeout))
    params['timeout'] = datetime.timedelta(seconds=float(timeout))
    return params
