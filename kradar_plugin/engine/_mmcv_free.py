"""The framework-free modules of ``kradar_plugin.runner``, loaded without that package's ``__init__``.

``collection_check``, ``eval_mode``, ``failfast`` and ``dist_params`` use the standard library only, but
importing them as ``kradar_plugin.runner.<name>`` runs ``kradar_plugin/runner/__init__.py``, which imports
mmcv 1.x's runner (absent on the OpenMMLab 2.0 stack). They are loaded here from their files under private
module names, so the mmcv 1.x and mmengine adapters share one implementation of the eval-mode switch, the
sampler-order messages and the fail-fast report.
"""
import importlib.util
import os.path as osp
import sys

_RUNNER_DIR = osp.join(osp.dirname(osp.dirname(osp.abspath(__file__))), 'runner')
SHARED = ('collection_check', 'dist_params', 'eval_mode', 'failfast')


def load(name):
    """The module ``kradar_plugin/runner/<name>.py`` (one of ``SHARED``), imported once."""
    if name not in SHARED:
        raise ValueError('{} is not one of the framework-free runner modules {}'.format(name, SHARED))
    full = 'kradar_plugin.runner.' + name
    if full in sys.modules:  # the mmcv 1.x package is imported too: share its module objects
        return sys.modules[full]
    private = __name__ + '.' + name
    module = sys.modules.get(private)
    if module is None:
        spec = importlib.util.spec_from_file_location(private, osp.join(_RUNNER_DIR, name + '.py'))
        module = importlib.util.module_from_spec(spec)
        sys.modules[private] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[private]
            raise
    return module


collection_check = load('collection_check')
dist_params = load('dist_params')
eval_mode = load('eval_mode')
failfast = load('failfast')
