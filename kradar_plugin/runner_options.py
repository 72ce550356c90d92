"""The runner options of the eval switch in one table: config key, ``KRADAR_*`` variable, command-line flags,
parser, default; read by :func:`resolve`, :func:`add_arguments` and :func:`config_from_args` only.

An option is named by its config key: a key of the runner config (``runner.eval_samples``) on mmcv 1.x, of
the top-level config (``eval_samples``) on mmengine. A variable overrides the config, for users who keep
their own launch scripts; every option's variable, when set, asks for the switch (:func:`requested_switches`).
``eval_mode`` has one variable and one flag per mode: ``KRADAR_EVAL_ONLY=1`` / ``--eval-only`` pick
'only' (evaluate once, train nothing), ``KRADAR_EVAL_FIRST=1`` / ``--eval-first`` 'first' (evaluate once,
then train); ``=0`` turns a config's choice of that mode into 'off' (train; the guards still apply).
A foundation module: standard library and ``settings`` only; the variables' meanings are ``settings.TABLE``.
"""
import collections
import re

from . import settings

MODES = ('only', 'first', 'off')


# ------------------------------------------------------------------------------ parsers: (value, source)
def boolean(value, source):
    """True/False from a bool, 0/1 or a spelling of settings.TRUE / FALSE; a variable is told 1 or 0, a
    config value True or False."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in settings.TRUE + settings.FALSE:
        return value.strip().lower() in settings.TRUE
    raise ValueError('{}={!r}: expected {}'.format(
        source, value, '1 or 0' if source in settings.SETTINGS else 'True or False'))


def mode(value, source):
    """One of :data:`MODES`."""
    if not isinstance(value, str) or value not in MODES:
        raise ValueError('{} must be one of {}, got {!r}'.format(source, ', '.join(MODES), value))
    return value


def preflight_mode(value, source):
    """'auto' (before a pre-training evaluation), True (also in normal training) or False."""
    return value if isinstance(value, str) and value == 'auto' else boolean(value, source)


def positive_int(value, source):
    """A positive integer, also from a string."""
    original = value
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError('{}={!r}: expected a positive integer'.format(source, original))
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError('{}={!r}: expected a positive integer'.format(source, original))
    return value


def record_interval(value, source):
    """Write the partial record every N samples at least; 0: write none (nothing to resume from)."""
    if not isinstance(value, bool) and str(value).strip() == '0':
        return 0
    return positive_int(value, source)


def seconds(value, source):
    """A positive number of seconds (float)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = 0.0
    if number <= 0:
        raise ValueError('{}={!r}: expected a positive number of seconds'.format(source, value))
    return number


def fraction(value, source):
    """The least fraction of the model's parameter elements a checkpoint must provide; 0 turns the check off."""
    if isinstance(value, bool):
        raise ValueError('{}={!r}: expected a fraction in [0, 1] (0 turns the check off)'.format(source, value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError('{}={!r}: expected a fraction in [0, 1] (0 turns the check off)'.format(source, value))
    if not 0.0 <= number <= 1.0 or number != number:
        raise ValueError('{}={!r}: expected a fraction in [0, 1], e.g. 0.9 for 90% (0 turns the check '
                         'off)'.format(source, value))
    return number


def skip_limit(value, source):
    """None (fail fast), 'auto' (1% of the dataset) or a positive count (``0``/False: None; True: 'auto')."""
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


def checkpoint_list(value, source):
    """Paths/globs: a list/tuple as is, a string split at commas and whitespace."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = []
        for item in value:
            items.extend(checkpoint_list(item, source))
        return items
    return [part for part in re.split(r'[,\s]+', str(value)) if part]


def text(value, source):
    """A name or a path as given; '' is None."""
    return value or None


# the parsers that read an empty variable ('' is a spelling of off in settings.FALSE); for the others an
# empty variable is unset
_READ_EMPTY = (boolean, preflight_mode, skip_limit)


# ------------------------------------------------------------------------------------------- the table
class Option(collections.namedtuple('Option', 'key variable flags parse default')):
    """``key``: the config key, also the option's name; ``variable``: its ``KRADAR_*`` variable (None: none;
    a tuple for ``eval_mode``, one per mode); ``flags``: its :class:`Flag` s; ``parse(value, source)``:
    the value, or ValueError naming the source and the value; ``default``: when neither gives one."""

    @property
    def variables(self):
        return self.variable if isinstance(self.variable, tuple) else (self.variable,) if self.variable else ()

    @property
    def requested(self):
        """Setting the option's variable asks for the eval switch (every variable of the table does)."""
        return bool(self.variables)


class Flag(collections.namedtuple('Flag', 'spelling help sets argparse')):
    """A command-line flag: a bare one (``sets``: the config value it sets) or one that takes a value
    (``argparse``: its metavar, type, nargs, const), which becomes the config value. ``help`` may name the
    option's default as ``{default}``."""

    @property
    def dest(self):
        return self.spelling.lstrip('-').replace('-', '_')


def bare(spelling, sets, help):
    return Flag(spelling, help, sets, {})


def takes(spelling, help, **argparse):
    return Flag(spelling, help, None, argparse)


OPTIONS = (
    Option('eval_mode', (settings.EVAL_ONLY, settings.EVAL_FIRST), (
        bare('--eval-only', 'only', 'evaluate once before training and stop: zero iterations, no checkpoint'),
        bare('--eval-first', 'first', 'evaluate once before training, then train normally')), mode, 'only'),
    Option('eval_samples', settings.EVAL_SAMPLES, (
        takes('--eval-samples', 'evaluate on the first N validation samples only (every evaluation)',
              type=int, metavar='N'),), positive_int, None),
    Option('min_loaded', settings.MIN_LOADED, (), fraction, 0.9),
    Option('preflight', settings.PREFLIGHT, (), preflight_mode, 'auto'),
    Option('probe_model', settings.PROBE_MODEL, (), boolean, False),
    # the evaluation inference
    Option('eval_resume', settings.EVAL_RESUME, (
        bare('--no-resume', False, 'evaluation inference starts afresh instead of continuing a partial record'),),
        boolean, True),
    Option('eval_skip_bad', settings.EVAL_SKIP_BAD, (
        takes('--skip-bad-samples', 'skip (record and exclude) evaluation samples whose loading or inference '
              'raises, at most MAX (default 1%% of the dataset); without it the run fails fast',
              nargs='?', const='auto', metavar='MAX'),), skip_limit, None),
    Option('eval_record_every', None, (), record_interval, None),
    # checkpoints (KRADAR_TRUST_CHECKPOINT is read by kradar_plugin.loading itself: it asks for no switch)
    Option('trust_checkpoint', None, (
        bare('--trust-checkpoint', True, 'load checkpoints with full unpickling, which runs any code they hold '
             '(default: only tensors, arrays, containers and the runners\' plain data are rebuilt)'),),
        boolean, False),
    # the checkpoint sweep
    Option('eval_checkpoints', settings.EVAL_CHECKPOINTS, (
        takes('--checkpoints', 'evaluate each checkpoint (paths or quoted globs) in epoch order in one launch',
              nargs='+', metavar='CKPT'),), checkpoint_list, ()),
    Option('eval_watch', settings.EVAL_WATCH, (
        takes('--watch', 'evaluate each new epoch_*/iter_*.pth of DIR once, as it appears complete',
              metavar='DIR'),), text, None),
    Option('eval_watch_idle', settings.EVAL_WATCH_IDLE, (
        takes('--watch-idle', 'stop watching after S seconds without a new checkpoint (default {default:.0f})',
              type=float, metavar='S'),), seconds, 3600.0),
    Option('eval_watch_poll', None, (
        takes('--watch-poll', 'seconds between two looks at the watched directory (default {default:.0f})',
              type=float, metavar='S'),), seconds, 10.0),
    Option('eval_final_epoch', settings.EVAL_FINAL_EPOCH, (
        takes('--watch-final-epoch', 'stop watching once the checkpoint of epoch N is evaluated',
              type=int, metavar='N'),), positive_int, None),
    Option('eval_key', settings.EVAL_KEY, (
        takes('--eval-key', 'the metric that names the best checkpoint (default: the headline BEV AP of the '
              'first class); KEY:min for a metric where lower is better', metavar='KEY'),), text, None),
    Option('eval_stop_on_error', settings.SWEEP_STOP_ON_ERROR, (
        bare('--sweep-stop-on-error', True, 'end the sweep at the first checkpoint that fails to load or to '
             'evaluate'),), boolean, False),
)
OPTION = collections.OrderedDict((o.key, o) for o in OPTIONS)
KEYS = tuple(OPTION)
INFERENCE = ('eval_resume', 'eval_skip_bad', 'eval_record_every')   # run_context.inference, in this order
SWEEP = KEYS[KEYS.index('eval_checkpoints'):]
SWEEP_GROUP = 'checkpoint sweep (with --eval-only)'
# the variables that ask the runner adapters for the eval switch (registration becomes immediate)
SWITCHES = tuple(name for o in OPTIONS if o.requested for name in o.variables)


# ------------------------------------------------------------------------------------------- readers
def check(key, value, source=None):
    """A value given in Python (a hook's or a sweep request's argument): the default for None, else parsed
    (errors name ``source``, the key by default)."""
    option = OPTION[key]
    return option.default if value is None else option.parse(value, source or key)


def environment(keys=KEYS, environ=None):
    """{key: parsed value} of the options whose variable is set (an empty one counts only where the parser
    reads it as off); ``eval_mode`` is read by :func:`resolve`."""
    out = {}
    for key in keys:
        option = OPTION[key]
        if len(option.variables) == 1:
            given, value = _read(option.variable, option.parse, environ)
            if given:
                out[key] = value
    return out


def resolve(config, keys=KEYS, environ=None, prefix='', defaults=None):
    """{key: value} of ``keys``: the config value (``config.get(key)``; None is unset) parsed, errors naming
    ``prefix + key``, else the default (``defaults`` override the table's); a set variable overrides both."""
    out = {}
    for key in keys:
        option, value = OPTION[key], config.get(key)
        value = (defaults or {}).get(key, option.default) if value is None else option.parse(value, prefix + key)
        if len(option.variables) > 1:
            value = _picked_mode(option, value, environ)
        else:
            value = environment((key,), environ).get(key, value)
        out[key] = value
    return out


def _read(name, parse, environ):
    """(True, parsed value) for a set variable, (False, None) otherwise."""
    if not settings.is_set(name, environ):
        return False, None
    value = settings.raw(name, environ)
    if not value and parse not in _READ_EMPTY:
        return False, None
    return True, parse(value, name)


def _picked_mode(option, value, environ):
    """``eval_mode`` after its variables: 1 picks that mode (two are exclusive), 0 turns it off."""
    picks = [(name, choice, _read(name, boolean, environ)[1]) for name, choice in zip(option.variables, MODES)]
    on = [name for name, _, pick in picks if pick]
    if len(on) > 1:
        raise ValueError('{}=1 and {}=1 are exclusive: choose one'.format(*on))
    for _, choice, pick in picks:
        if pick:
            return choice
    return 'off' if any(pick is False and value == choice for _, choice, pick in picks) else value


def requested_switches(environ=None):
    """``['NAME=value', ...]`` of the :data:`SWITCHES` the environment sets to ask for something: a flag not
    set false (an unparsable value counts: the runner adapter then names it), any other variable set to any
    value (``KRADAR_MIN_LOADED=0`` asks to turn the check off). The one rule for "is a switch requested?",
    used by the registration and by the runner adapters."""
    out = []
    for name in SWITCHES:
        value = settings.raw(name, environ)
        if value and not (settings.SETTINGS[name].type == 'flag' and value.lower() in settings.FALSE):
            out.append('{}={}'.format(name, value))
    return out


# ------------------------------------------------------------------------------------------- command line
def add_arguments(parser):
    """The options' flags on an argparse parser (both train entry points): the flags of one option are
    exclusive, the sweep's are a group of their own."""
    sweep = None
    for option in OPTIONS:
        target = parser
        if option.key in SWEEP:
            sweep = sweep or parser.add_argument_group(SWEEP_GROUP)
            target = sweep
        if len(option.flags) > 1:
            target = target.add_mutually_exclusive_group()
        for flag in option.flags:
            if flag.sets is None:
                target.add_argument(flag.spelling, default=None, help=flag.help.format(default=option.default),
                                    **flag.argparse)
            else:
                target.add_argument(flag.spelling, action='store_true', help=flag.help)
    return parser


def config_from_args(args):
    """The config keys (without ``runner.``) that the given flags set, parsed (errors name the flag)."""
    out = {}
    for option in OPTIONS:
        for flag in option.flags:
            given = getattr(args, flag.dest, None)
            if flag.sets is not None:
                if given and option.key not in out:
                    out[option.key] = flag.sets
            elif given is not None:
                out[option.key] = option.parse(given, flag.spelling)
    return out
