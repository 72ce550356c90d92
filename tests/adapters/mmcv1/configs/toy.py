# Test-only config for the runner tests: a tiny regression model on a deterministic toy dataset.
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components'],
                      allow_failed_imports=False)
model = dict(type='ToyRegressor', fail_on_rank=None, pretrained=None)  # mmdet's test.py resets 'pretrained'
data = dict(
    samples_per_gpu=2,
    workers_per_gpu=0,
    train=dict(type='ToyEvalDataset', num_samples=8, pipeline=[]),
    val=dict(type='ToyEvalDataset', num_samples=9, pipeline=[], test_mode=True),
    test=dict(type='ToyEvalDataset', num_samples=9, pipeline=[], test_mode=True))
evaluation = dict(interval=1)
optimizer = dict(type='SGD', lr=0.05, momentum=0.9, weight_decay=0.0)
optimizer_config = dict(grad_clip=None)
lr_config = dict(policy='fixed')
runner = dict(type='EpochBasedRunner', max_epochs=1)
checkpoint_config = dict(interval=1)
log_config = dict(interval=1, hooks=[dict(type='TextLoggerHook')])
dist_params = dict(backend='gloo', timeout=120)
log_level = 'INFO'
load_from = None
resume_from = None
workflow = [('train', 1)]
# mmdet's tools/test.py would otherwise start 2 dataloader workers per process
data.update(test_dataloader=dict(samples_per_gpu=1, workers_per_gpu=0))
