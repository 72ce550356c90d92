"""Fixtures and collection rules for every test.

``make test`` runs each stack's tests in two pytest runs (tools/run_tests.sh): the tests that launch nothing in
parallel (pytest-xdist, ``-n 2 --dist loadgroup -m "not launch"``), then the ``launch`` tests one at a time
(``-m launch``): a launch starts several processes and its time checks assume it has the machine. A launch
started by a test without the marker while other xdist workers run is refused (``tests.launching``), so that a
new launch test is marked rather than run beside others. Under ``--dist loadgroup`` the launch tests share one
xdist group (one worker, one after the other).
"""
import os

import pytest

from tests import launching


# In-process tests that build datasets through mmdet's DATASETS registry: tests/project's fixture registers the
# project's own KRadarDataset (under the plugin's name) for the rest of the session. Under ``--dist loadgroup``
# they share one xdist worker and run in collection order, the order of a serial run (tests/datasets first).
REGISTRY_GROUP = ('tests/datasets/', 'tests/project/')


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin('xdist'):
        return
    if config.getoption('numprocesses', None):
        # the few tests of a minute or more first, so that the workers do not end on one of them
        items.sort(key=lambda item: item.get_closest_marker('slow') is None)
    for item in items:
        if item.get_closest_marker('launch') is not None:
            item.add_marker(pytest.mark.xdist_group('launch'))
        elif item.nodeid.startswith(REGISTRY_GROUP):
            item.add_marker(pytest.mark.xdist_group('mmdet-registry'))


@pytest.fixture(autouse=True)
def _launch_marker_known(request):
    """Tells ``tests.launching`` whether the running test is marked ``launch``."""
    launching.CURRENT_TEST[:] = [request.node.nodeid, request.node.get_closest_marker('launch') is not None]
    yield
    launching.CURRENT_TEST[:] = []


@pytest.fixture(autouse=True)
def _registration_setting_restored():
    """``kradar_cli``'s entry points, called in process here, switch the framework registration off in
    ``os.environ`` (what a console script wants): restore it, so later tests that launch frameworks in child
    processes still register the plugin."""
    before = os.environ.get('KRADAR_PLUGIN_REGISTER')
    yield
    if before is None:
        os.environ.pop('KRADAR_PLUGIN_REGISTER', None)
    else:
        os.environ['KRADAR_PLUGIN_REGISTER'] = before
