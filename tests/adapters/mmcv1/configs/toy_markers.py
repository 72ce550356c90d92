# The toy config with marker files (tests/adapters/mmcv1/fixture_markers.py) for the lost-rank tests: every rank
# writes where it is (inference batch, result collection) and the slow ranks sleep in each inference batch.
_base_ = ['./toy.py']
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components',
                               'tests.adapters.mmcv1.fixture_markers'],
                      allow_failed_imports=False)
model = dict(type='ToyMarkedRegressor', slow_ranks=[0, 1, 2, 3], sleep_s=0.5)
custom_hooks = [dict(type='CollectionMarkerHook')]
