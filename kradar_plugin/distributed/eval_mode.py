"""The eval-only switch settings (mode, number of samples) from a runner config and the environment.

Modes: ``'only'`` (evaluate once, train nothing), ``'first'`` (evaluate once, then train normally),
``'off'`` (train normally; the evaluation guards still apply). Environment variables, for users who keep
their own launch scripts, override the config: ``KRADAR_EVAL_ONLY=1``, ``KRADAR_EVAL_FIRST=1``
(``=0`` turns a mode off), ``KRADAR_EVAL_SAMPLES=N``; and for the checks before the first evaluation
``KRADAR_MIN_LOADED=<fraction>`` (``runner.min_loaded``), ``KRADAR_PREFLIGHT=0|1`` (``runner.preflight``)
and ``KRADAR_PROBE_MODEL=0|1`` (``runner.probe_model``).
"""
import os

from .. import settings

MODES = ('only', 'first', 'off')
PREFLIGHT_MODES = ('auto', True, False)


def _env_flag(environ, name):
    """True/False for a set variable, None when unset; ValueError naming it for anything else."""
    return settings.flag(name, environ)


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
    """True when the environment asks for eval-only, eval-first, an evaluation subset, a checkpoint
    threshold, the preflight, the model probe or a checkpoint sweep (``settings.requested_switches``)."""
    return bool(settings.requested_switches(environ))


def check_flag(value, source):
    """A boolean config value (True/False, 1/0 or their strings from --cfg-options)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in settings.TRUE + settings.FALSE:
        return value.strip().lower() in settings.TRUE
    raise ValueError('{}={!r}: expected True or False'.format(source, value))


def resolve_preflight(preflight='auto', probe_model=False, environ=None):
    """(preflight, probe_model): preflight 'auto' (before a pre-training evaluation), True (also in normal
    training) or False; probe_model: one forward/backward to find parameters without gradient (opt-in).
    ``KRADAR_PREFLIGHT`` / ``KRADAR_PROBE_MODEL`` override the config."""
    environ = os.environ if environ is None else environ
    if not (isinstance(preflight, str) and preflight == 'auto'):
        preflight = check_flag(preflight, 'runner.preflight')
    probe_model = check_flag(probe_model, 'runner.probe_model')
    env = _env_flag(environ, settings.PREFLIGHT)
    if env is not None:
        preflight = env
    env = _env_flag(environ, settings.PROBE_MODEL)
    if env is not None:
        probe_model = env
    return preflight, probe_model


def resolve(mode='only', samples=None, environ=None):
    """(mode, samples) after applying the environment overrides to the config values."""
    environ = os.environ if environ is None else environ
    mode = check_mode(mode)
    samples = check_samples(samples)
    only, first = _env_flag(environ, settings.EVAL_ONLY), _env_flag(environ, settings.EVAL_FIRST)
    if only and first:
        raise ValueError('{}=1 and {}=1 are exclusive: choose one'.format(settings.EVAL_ONLY, settings.EVAL_FIRST))
    if only:
        mode = 'only'
    elif first:
        mode = 'first'
    elif (only is False and mode == 'only') or (first is False and mode == 'first'):
        mode = 'off'
    if settings.raw(settings.EVAL_SAMPLES, environ):
        samples = check_samples(environ[settings.EVAL_SAMPLES], settings.EVAL_SAMPLES)
    return mode, samples


def add_arguments(parser):
    """Add ``--eval-only`` / ``--eval-first`` (mutually exclusive) and ``--eval-samples N`` to an argparse
    parser: the same options for the mmcv 1.x and the mmengine train entry points."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--eval-only', action='store_true',
                      help='evaluate once before training and stop: zero iterations, no checkpoint')
    mode.add_argument('--eval-first', action='store_true',
                      help='evaluate once before training, then train normally')
    parser.add_argument('--eval-samples', type=int, default=None, metavar='N',
                        help='evaluate on the first N validation samples only (every evaluation)')
    return parser


def check_skip(value, source='eval_skip_bad'):
    """None (fail fast), 'auto' (1% of the dataset) or a positive count from a config value, a variable or
    the command line (``0``/False: None; True: 'auto')."""
    if value is None or value is False:
        return None
    if value is True:
        return 'auto'
    if isinstance(value, str):
        text = value.strip().lower()
        if text in settings.FALSE:
            return None
        if text in ('auto',) + settings.TRUE[1:]:
            return 'auto'
        try:
            value = int(text)
        except ValueError:
            raise ValueError('{}={!r}: expected a number of samples, auto or 0'.format(source, value))
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError('{}={!r}: expected a number of samples, auto or 0'.format(source, value))
    return value or None


def resolve_inference(resume=True, skip_bad=None, record_every=None, environ=None):
    """(resume, skip_max, record_every) of the evaluation inference: config values (``record_every``: write
    the partial record every N samples at least; 0: write none) with ``KRADAR_EVAL_RESUME`` / ``KRADAR_EVAL_SKIP_BAD``
    overriding them."""
    environ = os.environ if environ is None else environ
    resume = check_flag(resume, 'eval_resume')
    skip = check_skip(skip_bad)
    env = _env_flag(environ, settings.EVAL_RESUME)
    if env is not None:
        resume = env
    if settings.is_set(settings.EVAL_SKIP_BAD, environ):
        skip = check_skip(settings.raw(settings.EVAL_SKIP_BAD, environ), settings.EVAL_SKIP_BAD)
    if record_every is not None and not isinstance(record_every, bool) and str(record_every).strip() == '0':
        return resume, skip, 0   # no partial record (the benchmark's baseline): nothing to resume from
    return resume, skip, check_samples(record_every, 'eval_record_every')


def add_inference_arguments(parser):
    """``--no-resume`` and ``--skip-bad-samples [MAX]`` (both train entry points)."""
    parser.add_argument('--no-resume', action='store_true',
                        help='evaluation inference starts afresh instead of continuing a partial record')
    parser.add_argument('--skip-bad-samples', nargs='?', const='auto', default=None, metavar='MAX',
                        help='skip (record and exclude) evaluation samples whose loading or inference raises, '
                             'at most MAX (default 1%% of the dataset); without it the run fails fast')
    return parser


def inference_config(args):
    """The config keys (without the ``runner.`` prefix) the two flags ask for."""
    out = {}
    if getattr(args, 'no_resume', False):
        out['eval_resume'] = False
    if getattr(args, 'skip_bad_samples', None) is not None:
        out['eval_skip_bad'] = check_skip(args.skip_bad_samples, '--skip-bad-samples')
    return out
