"""Test-only instrumentation for the lost-rank tests: where each worker process is, written as marker files
into ``$TOY_MARKER_DIR`` so that the test can SIGKILL a chosen rank at a chosen moment.

- ``ToyMarkedRegressor``: the toy model; each inference batch first writes ``infer.<rank>.<k>`` (k = the
  process's k-th inference batch; the file holds the pid), then sleeps ``sleep_s`` on the ``slow_ranks``;
- ``CollectionMarkerHook``: wraps the result collection (mmcv's and mmdet's ``collect_results_cpu``, looked
  up at call time) to write ``collect.<rank>.<k>`` as the rank enters its k-th collection.
"""
import os
import os.path as osp
import time

from mmcv.runner import HOOKS, Hook
from mmdet.models import DETECTORS

from .fixture_components import ToyRegressor

_COUNTS = {}


def mark(stage):
    directory = os.environ.get('TOY_MARKER_DIR')
    if not directory:
        return
    rank = int(os.environ.get('RANK', '0'))
    _COUNTS[stage] = _COUNTS.get(stage, 0) + 1
    path = osp.join(directory, '{}.{}.{}'.format(stage, rank, _COUNTS[stage]))
    with open(path + '.tmp', 'w') as f:
        f.write(str(os.getpid()))
    os.replace(path + '.tmp', path)


@DETECTORS.register_module()
class ToyMarkedRegressor(ToyRegressor):
    def __init__(self, slow_ranks=(), sleep_s=0.0, **kwargs):
        super(ToyMarkedRegressor, self).__init__(**kwargs)
        self.slow_ranks = tuple(slow_ranks)
        self.sleep_s = sleep_s

    def forward(self, x, img_metas, target=None, return_loss=True, rescale=False, **kwargs):
        if not return_loss:
            mark('infer')
            if int(os.environ.get('RANK', '0')) in self.slow_ranks:
                time.sleep(self.sleep_s)
        return super(ToyMarkedRegressor, self).forward(x, img_metas, target, return_loss, rescale, **kwargs)


@HOOKS.register_module()
class CollectionMarkerHook(Hook):
    def before_run(self, runner):
        import importlib
        for name in ('mmcv.engine.test', 'mmdet.apis.test'):
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            original = getattr(module, 'collect_results_cpu', None)
            if original is None or getattr(original, '_marked', False):
                continue

            def collect(*args, _original=original, **kwargs):
                mark('collect')
                return _original(*args, **kwargs)
            collect._marked = True
            module.collect_results_cpu = collect
