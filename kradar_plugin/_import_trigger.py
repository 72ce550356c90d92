"""Run a callback once, right after the first OpenMMLab framework import completes.

``import kradar_plugin`` in a process that has not imported mmcv/mmengine/mmdet/mmdet3d (an evaluation
script, a notebook) should not pay the seconds of importing torch and the frameworks just to register
adapters nobody may use. Every OpenMMLab flow imports the framework before it builds anything from a
registry, so registering when that import completes is early enough: a config's ``custom_imports`` runs
after mmcv/mmengine is imported (registration is then immediate), and ``import kradar_plugin`` followed
by ``import mmdet3d`` registers when mmdet3d's own ``__init__`` has finished (before any of its
submodules is imported).

The trigger fires when the OUTERMOST framework import (a framework package, or a submodule of one already
loaded) finishes successfully (``import mmdet3d`` imports mmdet, which
imports mmcv: the callback runs after mmdet3d, never inside a half-initialised package). It patches
``exec_module`` on the per-module file loader only (the loader keeps its type, so pkg_resources and
importlib.resources see the usual loader) and removes the patch after use.
"""
import importlib.machinery
import sys

FRAMEWORKS = ('mmcv', 'mmengine', 'mmdet', 'mmdet3d')
# loaders created per module (safe to patch one instance); a zip importer is shared and is left alone
PER_MODULE_LOADERS = (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader)


def frameworks_imported():
    """The framework packages already in ``sys.modules``."""
    return [name for name in FRAMEWORKS if name in sys.modules]


class FrameworkImportTrigger(object):
    """A ``sys.meta_path`` finder that serves no module itself: it finds a framework's spec through the
    other finders and wraps its loader so that ``callback`` runs after the outermost framework import."""

    def __init__(self, callback):
        self.callback = callback
        self.depth = 0          # framework imports in progress (nested: mmdet3d -> mmdet -> mmcv)
        self.fired = False
        self._finding = set()   # names being looked up through the other finders (no recursion)

    def install(self):
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)
        return self

    def uninstall(self):
        while self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(self, name, path=None, target=None):
        if self.fired or name in self._finding:
            return None
        if name not in FRAMEWORKS and not (name.partition('.')[0] in FRAMEWORKS and frameworks_imported()):
            return None   # (a framework submodule counts once its package is loaded: ``import mmdet3d`` may
            #               have failed after importing mmcv, and the next import is then ``mmcv.runner``)
        self._finding.add(name)
        try:
            spec = self._other_finders_spec(name, path, target)
        finally:
            self._finding.discard(name)
        loader = getattr(spec, 'loader', None)
        if isinstance(loader, PER_MODULE_LOADERS) and 'exec_module' not in vars(loader):
            self._wrap(loader)
        return spec

    def _other_finders_spec(self, name, path, target):
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find_spec = getattr(finder, 'find_spec', None)
            if find_spec is None:
                continue
            spec = find_spec(name, path, target)
            if spec is not None:
                return spec
        return None

    def _wrap(self, loader):
        original = loader.exec_module
        trigger = self

        def exec_module(module):
            vars(loader).pop('exec_module', None)   # one use: the loader is pristine again
            trigger.depth += 1
            try:
                original(module)
            finally:
                trigger.depth -= 1
            if trigger.depth == 0:
                trigger.fire()

        loader.exec_module = exec_module

    def fire(self):
        if self.fired:
            return
        self.fired = True
        self.uninstall()
        self.callback()
