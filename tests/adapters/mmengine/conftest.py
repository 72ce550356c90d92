"""tests/adapters/mmengine run on the OpenMMLab 2.0 stacks (.venv-mm2, .venv-latest: mmengine, an mmcv 2.x, mmdet3d
1.x); on any other environment they are not collected (nothing here is imported there).

On a 2.0 stack the tests skip by capability: when ``import mmcv._ext`` fails (an mmcv 2.x built without its ops,
e.g. ``pip install onedl-mmcv`` in an isolated build without torch), every module but those that run without
compiled ops (``WITHOUT_COMPILED_OPS``) is skipped with that error as the reason, instead of erroring at import.
"""
import importlib.util
import os

import pytest


def _has(path):
    parts = path.split('/')
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    locations = list(getattr(spec, 'submodule_search_locations', None) or []) if spec else []
    return any(os.path.exists(os.path.join(loc, *parts[1:])) for loc in locations)


# which stack this is: mmengine, mmcv 2.x (mmcv.transforms) and mmdet3d 1.x (mmdet3d.registry) installed
MM2_STACK = _has('mmengine') and _has('mmdet3d/registry.py') and _has('mmcv/transforms')
# the modules whose tests need no compiled mmcv op (the process-group teardown, this skip's own test; the doctor's
# would rightly FAIL the stack: the doctor's own tests judge such a stack, tests/doctor/test_rules.py)
WITHOUT_COMPILED_OPS = ('test_cpu_dist.py', 'test_capability_skip.py')


def rebuild_command():
    """The build of the installed mmcv distribution with its ops (``facts.mmcv_build_command``, the doctor's)."""
    from importlib import metadata  # novermin  (the 2.0 stacks run Python >= 3.8)

    from kradar_plugin.facts.mmcv_wheels import mmcv_build_command

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None
    for dist in ('onedl-mmcv', 'mmcv'):
        if version(dist):
            return mmcv_build_command(dist, version(dist), version('setuptools'))
    return 'install an mmcv 2.x built with its ops'


def compiled_ops_missing():
    """None when ``import mmcv._ext`` works, else why it fails (one line)."""
    try:
        import mmcv._ext  # noqa: F401
    except Exception as exc:  # ImportError, or an undefined symbol of an mmcv built for another torch
        return 'import mmcv._ext fails (%s: %s): these tests need mmcv\'s compiled ops; rebuild: %s' % (
            type(exc).__name__, str(exc).splitlines()[0] if str(exc) else '', rebuild_command())
    return None


if not MM2_STACK:
    collect_ignore_glob = ['test_*.py']
else:
    OPS_MISSING = compiled_ops_missing()

    class _NeedsCompiledOps(pytest.Module):
        """A test module skipped, not imported, because mmcv's compiled ops do not import."""

        def collect(self):
            pytest.skip(OPS_MISSING)

    def pytest_pycollect_makemodule(module_path, parent):
        if OPS_MISSING and module_path.name.startswith('test_') and module_path.name not in WITHOUT_COMPILED_OPS:
            return _NeedsCompiledOps.from_parent(parent, path=module_path)
        return None
