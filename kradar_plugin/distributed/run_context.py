"""What one run carries between our components, in one object instead of attributes on framework objects.

The runner builder of each adapter (mmcv 1.x ``EvalOnlyRunnerConstructor``, mmengine ``EvalOnlyRunner``) calls
:func:`start` once per run; hooks, datasets and metrics read :func:`current` (as mmengine's
``MessageHub.get_current_instance()``: a process runs one job at a time). Outside such a run :func:`current` is
a fresh context with nothing recorded, so every reader works without one.

Fields (None / empty until a component records them):
- ``checkpoint_meta``: the ``meta`` dict of the checkpoint the runner loaded (its mmdet3d version tells
  the box convention the evaluation must use);
- ``checked_loading`` / ``min_loaded``: whether checkpoints are loaded through our checked loading, and
  the smallest loaded fraction it accepts;
- ``checkpoint_report`` / ``checkpoint_ema``: the checked loading's report and the checkpoint's EMA entries;
- ``data_loaders``: the loaders ``runner.run`` received (the preflight checks the training loaders);
- ``saved_results``: the pickle the evaluation guard wrote just before the dataset's / metric's evaluation
  (a dataset or metric that would pickle the same results first reuses it; :meth:`take_saved_results`);
- ``results_tag``: the name the evaluation guard gives the next saved results (``results_<tag>.pkl``) instead
  of ``epoch_<E>``/``iter_<I>``: a checkpoint sweep sets it to the checkpoint's stem;
- ``inference``: ``(resume, skip_max, record_every)`` of the evaluation inference (``runner_options.INFERENCE``);
- ``session``: the running evaluation's ``InferenceSession`` (its record, the samples it excluded).
"""


class RunContext(object):
    """One run's state shared by our hooks, datasets and metrics (see the module docstring)."""

    def __init__(self):
        self.checkpoint_meta = self.min_loaded = self.checkpoint_report = self.data_loaders = None
        self.saved_results = self.results_tag = self.session = None
        self.checked_loading, self.checkpoint_ema, self.inference = False, {}, (True, None, None)

    def take_saved_results(self):
        """The pickle saved for the evaluation running now, once (None afterwards or without a guard)."""
        path, self.saved_results = self.saved_results, None
        return path

    def __repr__(self):
        return 'RunContext({})'.format(', '.join('{}={!r}'.format(k, v) for k, v in sorted(vars(self).items())
                                                 if k not in ('checkpoint_ema', 'data_loaders')))


_current = [RunContext()]


def start():
    """A new context for the run being built; it becomes :func:`current`."""
    _current[0] = RunContext()
    return _current[0]


def current():
    """The context of the run in this process (an empty one outside our runners)."""
    return _current[0]
