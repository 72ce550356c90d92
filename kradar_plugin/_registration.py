"""Register the adapters whose frameworks are importable; never fail because a framework is absent or
broken.

A framework that is installed but fails to import (``No module named 'mmcv._ext'``, an mmdet3d version
assert, ...) gives ONE warning naming the error and pointing at ``kradar-doctor``, and the rest of the
package keeps working: the doctor and ``kradar-eval`` must run precisely in such environments.
``KRADAR_PLUGIN_REGISTER=0`` skips registration altogether (the command-line tools need none of it).

Registration is immediate when a framework is already imported (a config's ``custom_imports``: mmcv or
mmengine loaded the config) or a ``KRADAR_EVAL_*`` switch is set; otherwise it waits for the first
framework import to complete (``_import_trigger``), so ``import kradar_plugin`` for the evaluator or the
IoU alone never imports torch. ``KRADAR_PLUGIN_REGISTER=now`` forces the immediate import.
"""
import importlib
import importlib.util
import os
import warnings

from . import _import_trigger
from . import runner_options, settings


class RegistrationWarning(UserWarning):
    """An installed framework (or our adapter for it) failed to import; its components are missing."""


# (adapter module, the framework module it needs); imported in this order.
ADAPTERS = (
    ('kradar_plugin.compat.mmdet3d_alias', 'mmdet3d'),
    ('kradar_plugin.adapters.mmcv1', 'mmcv'),
    ('kradar_plugin.adapters.mmcv1.kradar_dataset', 'mmdet'),
    ('kradar_plugin.demo.tiny_radar', 'mmdet'),
    ('kradar_plugin.adapters.mmengine', 'mmengine'),
    ('kradar_plugin.adapters.mmengine.kradar_det3d', 'mmdet3d'),
)
# adapters that import no framework (mmdet3d's IoU module names): installed at once even when the rest waits
EAGER_ADAPTERS = ('kradar_plugin.compat.mmdet3d_alias',)
# Adapters written for one OpenMMLab generation: (a file of the framework package that this generation has,
# generation). The other generation's install lacks the file and the adapter is skipped, not reported: mmcv
# 1.x adapters are not tried on mmcv 2.x, mmdet3d 1.x (mmengine) ones not on mmdet3d <= 1.0.0rc6. Without
# mmengine the 1.x adapters are always tried, so a broken mmcv 1.x install is still reported.
GENERATION_MARKERS = {
    'kradar_plugin.adapters.mmcv1': ('mmcv/runner', '1.x'),
    'kradar_plugin.adapters.mmcv1.kradar_dataset': ('mmdet/datasets/builder.py', '1.x'),
    'kradar_plugin.demo.tiny_radar': ('mmdet/models/builder.py', '1.x'),
    'kradar_plugin.adapters.mmengine.kradar_det3d': ('mmdet3d/registry.py', '2.x'),
}
# the adapters whose import installs the KRADAR_EVAL_* switch
SWITCH_ADAPTERS = ('kradar_plugin.adapters.mmcv1', 'kradar_plugin.adapters.mmengine')
failures = {}   # adapter module -> the exception that stopped it
deferred = []   # the installed FrameworkImportTrigger, while registration waits for a framework import


class SwitchUnavailableError(RuntimeError):
    """A KRADAR_EVAL_* variable asks for eval-only/first/samples but the runner adapter did not import."""


def importable(name):
    """True when ``name`` can be found (not imported: a broken install still counts)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def package_has(relative_path):
    """True when ``relative_path`` ('package/sub/path') exists in the installed package (found without
    importing it)."""
    parts = relative_path.split('/')
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    locations = list(getattr(spec, 'submodule_search_locations', None) or []) if spec is not None else []
    return any(os.path.exists(os.path.join(location, *parts[1:])) for location in locations)


def generation_matches(module):
    """False when ``module`` is written for the other OpenMMLab generation than the one installed (its
    marker file is missing and, for a 1.x adapter, mmengine is importable)."""
    marker = GENERATION_MARKERS.get(module)
    if marker is None:
        return True
    path, generation = marker
    if package_has(path):
        return True
    return generation == '1.x' and not importable('mmengine')


def register_framework_components():
    """Import each adapter whose framework is installed, now or (no framework imported yet, no switch set)
    when the first framework import completes; return the adapters loaded now."""
    mode = settings.raw(settings.PLUGIN_REGISTER).lower() or '1'
    if mode in ('0', 'false', 'no', 'off'):
        return []
    if (mode != 'now' and not _import_trigger.frameworks_imported() and not runner_options.requested_switches()
            and any(importable(framework) for framework in _import_trigger.FRAMEWORKS)):
        if not deferred:
            deferred.append(_import_trigger.FrameworkImportTrigger(_register_deferred).install())
        return [module for module, framework in ADAPTERS
                if module in EAGER_ADAPTERS and importable(framework) and _import_quietly(module)]
    return _register_now()


def _import_quietly(module):
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 - retried (and reported) by the deferred registration
        return False
    return True


def _register_deferred():
    del deferred[:]
    _register_now(stacklevel=2)


def _register_now(stacklevel=4):
    for trigger in deferred:
        trigger.uninstall()
    del deferred[:]
    loaded, failed = [], []
    for module, framework in ADAPTERS:
        if not importable(framework) or not generation_matches(module):
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - reported below, never silent
            failures[module] = exc
            failed.append('%s is installed but %s failed to import (%s: %s)'
                          % (framework, module, type(exc).__name__, exc))
            continue
        loaded.append(module)
    requested = runner_options.requested_switches()
    failed_switch = [m for m in SWITCH_ADAPTERS if m in failures]
    if requested and failed_switch:
        exc = failures[failed_switch[0]]
        raise SwitchUnavailableError(
            '{} is set, but {} failed to import ({}: {}), so the run would train instead of '
            'evaluating. Fix the environment (`kradar-doctor` names the version pair) or unset the '
            'variable.'.format(', '.join(requested), failed_switch[0], type(exc).__name__, exc))
    if failed:
        warnings.warn('kradar_plugin: %s; those components are not registered. Run `kradar-doctor` for the '
                      'version pair to fix.' % '; '.join(failed), RegistrationWarning, stacklevel=stacklevel)
    return loaded
