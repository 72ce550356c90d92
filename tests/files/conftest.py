import pytest


@pytest.fixture(scope='session')
def demo_tree(tmp_path_factory):
    """The demo's K-Radar-format tree (every label version, calibration, descriptions, splits), 24 + 24
    frames over four sequences."""
    from kradar_plugin.demo import tree as dt
    return dt.generate_tree(str(tmp_path_factory.mktemp('kradar_tree')), frames=24, train_frames=24)
