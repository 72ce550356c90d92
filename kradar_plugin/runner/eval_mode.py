"""The eval-only switch settings (mode, number of samples) from a runner config and the environment.

Modes: ``'only'`` (evaluate once, train nothing), ``'first'`` (evaluate once, then train normally),
``'off'`` (train normally; the evaluation guards still apply). Environment variables, for users who keep
their own launch scripts, override the config: ``KRADAR_EVAL_ONLY=1``, ``KRADAR_EVAL_FIRST=1``
(``=0`` turns a mode off), ``KRADAR_EVAL_SAMPLES=N``.
"""
import os

MODES = ('only', 'first', 'off')
ENV_ONLY = 'KRADAR_EVAL_ONLY'
ENV_FIRST = 'KRADAR_EVAL_FIRST'
ENV_SAMPLES = 'KRADAR_EVAL_SAMPLES'
_TRUE = ('1', 'true', 'yes', 'on')
_FALSE = ('0', 'false', 'no', 'off', '')


def _env_flag(environ, name):
    """True/False for a set variable, None when unset; ValueError naming it for anything else."""
    if name not in environ:
        return None
    value = environ[name].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError('{}={!r}: expected 1 or 0'.format(name, environ[name]))


def check_mode(mode):
    if mode not in MODES:
        raise ValueError('eval_mode must be one of {}, got {!r}'.format(', '.join(MODES), mode))
    return mode


def check_samples(samples, source='eval_samples'):
    if samples is None:
        return None
    original = samples
    if isinstance(samples, str):
        try:
            samples = int(samples.strip())
        except ValueError:
            raise ValueError('{}={!r}: expected a positive integer'.format(source, samples))
    if isinstance(samples, bool) or not isinstance(samples, int) or samples <= 0:
        raise ValueError('{}={!r}: expected a positive integer'.format(source, original))
    return samples


def env_requests_switch(environ=None):
    """True when the environment asks for eval-only, eval-first or an evaluation subset."""
    environ = os.environ if environ is None else environ
    return bool(_env_flag(environ, ENV_ONLY) or _env_flag(environ, ENV_FIRST)
                or environ.get(ENV_SAMPLES, '').strip())


def resolve(mode='only', samples=None, environ=None):
    """(mode, samples) after applying the environment overrides to the config values."""
    environ = os.environ if environ is None else environ
    mode = check_mode(mode)
    samples = check_samples(samples)
    only, first = _env_flag(environ, ENV_ONLY), _env_flag(environ, ENV_FIRST)
    if only and first:
        raise ValueError('{}=1 and {}=1 are exclusive: choose one'.format(ENV_ONLY, ENV_FIRST))
    if only:
        mode = 'only'
    elif first:
        mode = 'first'
    elif (only is False and mode == 'only') or (first is False and mode == 'first'):
        mode = 'off'
    if environ.get(ENV_SAMPLES, '').strip():
        samples = check_samples(environ[ENV_SAMPLES], ENV_SAMPLES)
    return mode, samples
