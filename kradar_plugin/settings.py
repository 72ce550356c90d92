"""Every ``KRADAR_*`` environment switch in one table (name, type, default, meaning), read here only.

A leaf module (standard library only): the core (``ops``, ``evaluation``, ``distributed``), the adapters and
the command-line tools all read their switches through :func:`raw` / :func:`flag` / :func:`enabled`, so a
name is spelled once and an unknown one is a ``KeyError``, not a silently ignored variable. The runner options
that the ``KRADAR_EVAL_*`` variables override (config key, flags, parser, default) are rows of
``runner_options.py``.
docs/settings.md is :func:`markdown`'s output
(``python -c "from kradar_plugin import settings; print(settings.markdown(), end='')" > docs/settings.md``).
"""
import collections
import os

Setting = collections.namedtuple('Setting', 'name type default meaning')

# the spellings of a flag, for the environment and for config values (runner_options.boolean)
TRUE = ('1', 'true', 'yes', 'on')
FALSE = ('0', 'false', 'no', 'off', '')

# every variable's name as a constant without its prefix (``settings.EVAL_ONLY == 'KRADAR_EVAL_ONLY'``): the
# modules refer to these, so that a name is spelled once and a linter sees a misspelt one
EVAL_ONLY = 'KRADAR_EVAL_ONLY'
EVAL_FIRST = 'KRADAR_EVAL_FIRST'
EVAL_SAMPLES = 'KRADAR_EVAL_SAMPLES'
MIN_LOADED = 'KRADAR_MIN_LOADED'
PREFLIGHT = 'KRADAR_PREFLIGHT'
PROBE_MODEL = 'KRADAR_PROBE_MODEL'
EVAL_CHECKPOINTS = 'KRADAR_EVAL_CHECKPOINTS'
EVAL_WATCH = 'KRADAR_EVAL_WATCH'
EVAL_WATCH_IDLE = 'KRADAR_EVAL_WATCH_IDLE'
EVAL_FINAL_EPOCH = 'KRADAR_EVAL_FINAL_EPOCH'
EVAL_KEY = 'KRADAR_EVAL_KEY'
SWEEP_STOP_ON_ERROR = 'KRADAR_SWEEP_STOP_ON_ERROR'
EVAL_RESUME = 'KRADAR_EVAL_RESUME'
EVAL_SKIP_BAD = 'KRADAR_EVAL_SKIP_BAD'
IOU_BACKEND = 'KRADAR_IOU_BACKEND'
EVAL_NO_NUMBA = 'KRADAR_EVAL_NO_NUMBA'
EVAL_THREADS = 'KRADAR_EVAL_THREADS'
EVAL_LOAD_WORKERS = 'KRADAR_EVAL_LOAD_WORKERS'
LOAD_MAX_FILE_MB = 'KRADAR_LOAD_MAX_FILE_MB'
LOAD_MAX_ARRAY_ELEMENTS = 'KRADAR_LOAD_MAX_ARRAY_ELEMENTS'
LOAD_MAX_ELEMENTS = 'KRADAR_LOAD_MAX_ELEMENTS'
LOAD_MEMORY_MB = 'KRADAR_LOAD_MEMORY_MB'
LOAD_SECONDS = 'KRADAR_LOAD_SECONDS'
TRUST_CHECKPOINT = 'KRADAR_TRUST_CHECKPOINT'
PLUGIN_REGISTER = 'KRADAR_PLUGIN_REGISTER'
PATCH_DATASETS = 'KRADAR_PATCH_DATASETS'
# the build scripts' and the test suite's
MMCV_CFLAGS = 'KRADAR_MMCV_CFLAGS'
WHEEL_CACHE = 'KRADAR_WHEEL_CACHE'
TEST_LOGS = 'KRADAR_TEST_LOGS'
REPO = 'KRADAR_REPO'
ECHOFUSION_REPO = 'KRADAR_ECHOFUSION_REPO'
ECHOFUSION_EVALUATOR = 'KRADAR_ECHOFUSION_EVALUATOR'
MMDET3D_REPO = 'KRADAR_MMDET3D_REPO'
REAL_LABELS = 'KRADAR_REAL_LABELS'

TABLE = (
    Setting(EVAL_ONLY, 'flag', 'unset',
            'Evaluate once before training and stop (zero iterations, no checkpoint), with an unmodified '
            'config and train script; `0` turns a config\'s eval-only off. Overrides `runner.eval_mode`.'),
    Setting(EVAL_FIRST, 'flag', 'unset',
            'Evaluate once before training, then train normally; exclusive with KRADAR_EVAL_ONLY=1.'),
    Setting(EVAL_SAMPLES, 'positive int', 'unset (all)',
            'Evaluate on the first N validation samples only (every evaluation of the run); overrides '
            '`runner.eval_samples`.'),
    Setting(MIN_LOADED, 'fraction in [0, 1]', '0.9',
            'Stop before evaluating when less than this fraction of the model\'s parameters was loaded from '
            'the checkpoint (0 turns the check off); overrides `runner.min_loaded`.'),
    Setting(PREFLIGHT, 'flag', 'auto',
            'Distributed preflight (samplers, worker pickling, CUDA in workers, shared memory, leftovers): '
            '`auto` runs it before a pre-training evaluation; overrides `runner.preflight`.'),
    Setting(PROBE_MODEL, 'flag', '0',
            'The preflight\'s one forward/backward that finds parameters without gradient (opt-in); '
            'overrides `runner.probe_model`.'),
    Setting(EVAL_CHECKPOINTS, 'paths or globs', 'unset',
            'Checkpoint sweep: evaluate each checkpoint (comma- or space-separated paths or globs, in epoch '
            'order) in one eval-only launch; summary in `work_dir/sweep.json`. Overrides '
            '`runner.eval_checkpoints`.'),
    Setting(EVAL_WATCH, 'directory or glob', 'unset',
            'Checkpoint sweep that watches a directory: each new complete `epoch_*.pth`/`iter_*.pth` is '
            'evaluated once (a restarted watcher skips what `sweep.json` records); overrides `runner.eval_watch`.'),
    Setting(EVAL_WATCH_IDLE, 'seconds', '3600',
            'A watching sweep stops after this long without a new checkpoint; overrides '
            '`runner.eval_watch_idle`.'),
    Setting(EVAL_FINAL_EPOCH, 'positive int', 'unset',
            'A watching sweep stops once the checkpoint of this epoch is evaluated; overrides '
            '`runner.eval_final_epoch`.'),
    Setting(EVAL_KEY, 'metric name[:min]', 'headline BEV AP of the first class',
            'The metric that names the best checkpoint of a sweep (`:min` where lower is better); overrides '
            '`runner.eval_key`.'),
    Setting(SWEEP_STOP_ON_ERROR, 'flag', '0',
            'End a checkpoint sweep at the first checkpoint that fails to load or to evaluate (default: record '
            'the error and go on); overrides `runner.eval_stop_on_error`.'),
    Setting(EVAL_RESUME, 'flag', '1',
            'Evaluation inference keeps a partial record per rank under `work_dir/eval_results/partial/<tag>/` '
            'and a relaunch of the same evaluation (same checkpoint content, dataset and test pipeline; any '
            'world size) infers only what is missing; `0` starts afresh. Overrides `runner.eval_resume` '
            '(mmengine: `eval_resume`) and `--no-resume`.'),
    Setting(EVAL_SKIP_BAD, 'MAX, auto or 0', '0 (fail fast)',
            'Skip evaluation samples whose loading or inference raises, at most MAX of them (`auto`: 1% of the '
            'dataset): each is recorded and excluded from the evaluation with its ground truth; past MAX the run '
            'fails fast naming them all. Overrides `runner.eval_skip_bad` (mmengine: `eval_skip_bad`) and '
            '`--skip-bad-samples [MAX]`.'),
    Setting(IOU_BACKEND, 'cuda, numba or numpy', 'automatic',
            'Force one rotated-IoU backend; an explicit backend that cannot run raises instead of falling '
            'back.'),
    Setting(EVAL_NO_NUMBA, 'flag', '0',
            'Run the evaluator\'s kernels as plain Python (same numbers, slower), e.g. to rule numba out.'),
    Setting(EVAL_THREADS, 'positive int', 'min(4, CPUs)',
            'Worker threads for the evaluator\'s precision/recall curves (the compiled kernels release the '
            'GIL).'),
    Setting(EVAL_LOAD_WORKERS, 'auto, 0 or 1', 'auto',
            'Trusted pickles (`--trust-pickle`): `kradar-eval` reads them in forked worker processes: `auto` for '
            'files of 4 MiB and more on Linux with 2+ CPUs, `0` never, `1` always (Linux). Untrusted files are '
            'always read in a child process with memory and time limits (Linux), whatever this says.'),
    Setting(LOAD_MAX_FILE_MB, 'positive number', '1024',
            'Files a user names (`kradar-eval` inputs, `evaluate_saved`, `load_kradar_infos`) larger than this '
            'are refused; `--max-file-mb`.'),
    Setting(LOAD_MAX_ARRAY_ELEMENTS, 'positive int', '20000000',
            'Elements one array of such a file may hold; `--max-array-elements`.'),
    Setting(LOAD_MAX_ELEMENTS, 'positive int', '50000000',
            'Elements (array elements, container entries, 8-byte units of strings) such a file may hold in '
            'all, every reference to a shared list or array counted; `--max-elements`.'),
    Setting(LOAD_MEMORY_MB, 'positive number', '512',
            'Address space the child process reading such a file may add (or 8x the file size when larger); '
            '`--max-memory-mb`.'),
    Setting(LOAD_SECONDS, 'positive number', '20',
            'Seconds the child process reading such a file may take; `--max-load-seconds`.'),
    Setting(TRUST_CHECKPOINT, 'flag', '0',
            'Load checkpoints with full unpickling (`torch.load(weights_only=False)`), which runs any code the '
            'file holds; by default `kradar_plugin.loading.load_checkpoint` rebuilds only tensors, numpy arrays, '
            'containers and the runners\' plain data. Also `--trust-checkpoint`, the config\'s '
            '`trust_checkpoint=True`.'),
    Setting(PLUGIN_REGISTER, '1, 0 or now', '1',
            'Registration of the framework components: `1` at the first framework import (or at once when a '
            'framework is loaded or a KRADAR_EVAL_* switch is set), `now` at `import kradar_plugin`, `0` '
            'never (the command-line tools need none).'),
    Setting(PATCH_DATASETS, 'comma-separated names', 'KRadarDataset',
            'The registered dataset classes that `kradar_plugin.adapters.mmcv1.patch_echofusion` gives the fixed '
            '`evaluate`.'),
)
#: variables of the build scripts and the test suite (read by tools/setup_env.sh, tools/run_tests.sh and tests/,
#: not by the package): listed so that the table covers every variable the project reads
BUILD_AND_TEST = (
    Setting(MMCV_CFLAGS, 'compiler flags', '-O1 -g0',
            '`tools/setup_env.sh`: CFLAGS of the mmcv / mmcv-full CPU-ops compile (`""`: the stock flags).'),
    Setting(WHEEL_CACHE, 'directory', '~/.cache/kradar_plugin/wheels',
            '`tools/setup_env.sh`: where the compiled mmcv wheels are kept, per torch version and Python tag.'),
    Setting(TEST_LOGS, 'directory', 'work_dirs/test_logs',
            '`tools/run_tests.sh`: where the background environment builds of `make test` log.'),
    Setting(REPO, 'directory', "the fetched K-Radar repository",
            'tests: a kaist-avelab/K-Radar checkout or git directory; its evaluators, loader and parser are run '
            'against ours (skipped without it).'),
    Setting(ECHOFUSION_REPO, 'directory', 'the fetched EchoFusion repository',
            "tests: a tusen-ai/EchoFusion checkout or git directory; its evaluator and converter functions are run "
            "against ours (skipped without it)."),
    Setting(ECHOFUSION_EVALUATOR, 'file', 'unset',
            "tests: a copy of EchoFusion's `evaluate_kradar.py`, instead of reading it from the repository."),
    Setting(MMDET3D_REPO, 'directory', 'unset',
            "tests: an mmdet3d checkout for EchoFusion's evaluator parity test."),
    Setting(REAL_LABELS, 'directory', 'unset',
            "tests: a folder of K-Radar's real labels (a dataset root with `<seq>/info_label`, or an unzipped "
            "revised-label folder); every file is read here and by K-Radar's own loader and compared (the "
            "labels are CC BY-NC-ND: never copied into the repository)."),
)
SETTINGS = collections.OrderedDict((s.name, s) for s in TABLE)


def _environ(environ):
    return os.environ if environ is None else environ


def raw(name, environ=None):
    """The variable's value, stripped; '' when unset. KeyError for a name not in the table."""
    if name not in SETTINGS:
        raise KeyError('{} is not a kradar_plugin setting (see kradar_plugin/settings.py)'.format(name))
    return _environ(environ).get(name, '').strip()


def is_set(name, environ=None):
    raw(name, environ)          # an unknown name raises
    return name in _environ(environ)


def flag(name, environ=None):
    """True/False for a set flag, None when unset; ValueError naming the variable for anything else."""
    environ = _environ(environ)
    if not is_set(name, environ):
        return None
    value = raw(name, environ).lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValueError('{}={!r}: expected 1 or 0'.format(name, environ[name]))


def enabled(name, environ=None):
    """Lenient truth: anything but unset, '', 0, false, no, off."""
    return raw(name, environ).lower() not in FALSE


def positive_int(name, environ=None):
    """The integer value, None when unset; ValueError naming the variable for anything else."""
    value = raw(name, environ)
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise ValueError('{}={!r}: expected a positive integer'.format(name, value))
    return number


def number(name, environ=None):
    """A positive number (int when integral): the variable's value, else the table's default; ValueError
    naming the variable for anything else."""
    value = raw(name, environ) or SETTINGS[name].default
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0 or number != number or number == float('inf'):
        raise ValueError('{}={!r}: expected a positive number'.format(name, value))
    return int(number) if number == int(number) else number


def markdown():
    """The table as Markdown (docs/settings.md)."""
    lines = ['# Settings: the `KRADAR_*` environment variables', '',
             'Generated from `kradar_plugin/settings.py` (`settings.markdown()`), the one place '
             'that reads them. Config values (`runner.eval_mode`, ...) are the usual way; a variable overrides '
             'the config for users who keep their own launch scripts. Flags take `1`/`0` '
             '(also `true`/`false`, `yes`/`no`, `on`/`off`).', '',
             '| variable | type | default | meaning |', '| --- | --- | --- | --- |']
    for s in TABLE:
        lines.append('| `{}` | {} | {} | {} |'.format(s.name, s.type, s.default, s.meaning))
    lines += ['', '## Build and test variables', '',
              'Read by the build scripts and the test suite, not by the package.', '',
              '| variable | type | default | meaning |', '| --- | --- | --- | --- |']
    for s in BUILD_AND_TEST:
        lines.append('| `{}` | {} | {} | {} |'.format(s.name, s.type, s.default, s.meaning))
    return '\n'.join(lines) + '\n'

