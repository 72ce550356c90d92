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
# the modules whose tests need no compiled mmcv op (the process-group teardown, the doctor)
WITHOUT_COMPILED_OPS = ('test_cpu_dist.py', 'test_doctor_mm2.py')
REBUILD = ("rebuild mmcv with torch present: MMCV_WITH_OPS=1 pip install --no-build-isolation --no-binary "
           ":all: --force-reinstall --no-deps <mmcv or onedl-mmcv>==<version> (tools/setup_env.sh does)")


def compiled_ops_missing():
    """None when ``import mmcv._ext`` works, else why it fails (one line)."""
    try:
        import mmcv._ext  # noqa: F401
    except Exception as exc:  # ImportError, or an undefined symbol of an mmcv built for another torch
        return 'import mmcv._ext fails (%s: %s): these tests need mmcv\'s compiled ops; %s' % (
            type(exc).__name__, str(exc).splitlines()[0] if str(exc) else '', REBUILD)
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
