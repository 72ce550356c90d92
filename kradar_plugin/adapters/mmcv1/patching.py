"""How the mmcv 1.x adapter replaces a framework function: once, keeping the original as ``__wrapped__``.

Shared by the process-group inits (``dist_init``) and the CPU replacements of a distributed run
(``cpu_dist``). A replacement carries ``_kradar_patched`` so that installing twice changes nothing.
"""
import importlib
import sys


def loaded_modules(names):
    """The named modules that import (already imported or importable now). A framework that fails to
    import is left alone: the script that needs it reports that failure itself."""
    found = []
    for name in names:
        try:
            found.append(importlib.import_module(name))
        except Exception:
            continue
    return found


def replace(modules, attr, make_replacement):
    """Replace ``attr`` in every module that has it by ``make_replacement(original)`` (once per original)."""
    done = {}
    for mod in modules:
        original = getattr(mod, attr, None)
        if original is None or getattr(original, '_kradar_patched', False):
            continue
        key = id(original)
        if key not in done:
            done[key] = _mark(make_replacement(original), original)
        setattr(mod, attr, done[key])


def replace_everywhere(module_name, attr, make_replacement):
    """Replace the function ``module_name.attr`` in every loaded module that bound it under that name
    (``from mmdet.utils import build_ddp`` in a script's ``__main__`` included)."""
    mods = loaded_modules([module_name])
    if not mods:
        return
    original = getattr(mods[0], attr, None)
    if original is None or getattr(original, '_kradar_patched', False):
        return
    new = _mark(make_replacement(original), original)
    for mod in list(sys.modules.values()):
        try:
            if getattr(mod, attr, None) is original:
                setattr(mod, attr, new)
        except Exception:  # exotic module objects
            continue


def _mark(new, original):
    new._kradar_patched = True
    new.__wrapped__ = original
    return new
