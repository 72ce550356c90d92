"""Fixtures for every test."""
import os

import pytest


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
