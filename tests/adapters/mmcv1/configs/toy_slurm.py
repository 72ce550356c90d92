# The marked toy config (toy_markers.py) whose model raises on one chosen sample (fixture_slurm_model.py), for
# the Slurm launch tests: fail_on_sample=None is the uninterrupted model.
_base_ = ['./toy_markers.py']
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components',
                               'tests.adapters.mmcv1.fixture_markers', 'tests.adapters.mmcv1.fixture_slurm_model'],
                      allow_failed_imports=False)
model = dict(type='ToyFailOnSampleRegressor', fail_on_sample=None, slow_ranks=[], sleep_s=0.0)
