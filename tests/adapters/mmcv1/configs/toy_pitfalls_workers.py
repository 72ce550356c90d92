# Pitfalls of the worker side: a transform that moves data to CUDA inside the DataLoader workers (fork) and a
# dataset module that touches CUDA when it is imported (tests/adapters/mmcv1/fixture_cuda_import.py).
_base_ = ['./toy.py']
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components',
                               'tests.adapters.mmcv1.fixture_pitfalls',
                               'tests.adapters.mmcv1.fixture_cuda_import'], allow_failed_imports=False)
pipeline = [dict(type='ToyCudaTouch')]
mp_start_method = 'fork'
data = dict(
    workers_per_gpu=1,
    train=dict(type='ToyCudaDefaultDataset', pipeline=pipeline),
    val=dict(type='ToyCudaDefaultDataset', pipeline=pipeline),
    test=dict(type='ToyCudaDefaultDataset', pipeline=pipeline))
