# The toy config on ToyPipelineDataset: one DataLoader worker per process and a real mmdet pipeline whose
# transform pickles (ToyScale keeps a module-level function). The healthy case of the preflight/doctor checks.
_base_ = ['./toy.py']
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components',
                               'tests.adapters.mmcv1.fixture_pitfalls'],
                      allow_failed_imports=False)
pipeline = [dict(type='ToyScale', factor=1.0)]
data = dict(
    workers_per_gpu=1,
    train=dict(type='ToyPipelineDataset', pipeline=pipeline),
    val=dict(type='ToyPipelineDataset', pipeline=pipeline),
    test=dict(type='ToyPipelineDataset', pipeline=pipeline))
