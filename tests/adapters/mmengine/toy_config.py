# The fast tests' config: mmengine's real Runner on tests/adapters/mmengine/toy_components.py.
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmengine.toy_components'], allow_failed_imports=False)
model = dict(type='ToyModel')
train_dataloader = dict(batch_size=2, num_workers=0, sampler=dict(type='DefaultSampler', shuffle=True),
                        dataset=dict(type='ToyDataset', size=8))
val_dataloader = dict(batch_size=2, num_workers=0, sampler=dict(type='DefaultSampler', shuffle=False),
                      dataset=dict(type='ToyDataset', size=11))
val_evaluator = dict(type='ToyMetric')
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=2, val_interval=1)
val_cfg = dict(type='ValLoop')
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.01))
# Training lowers toy/mean (about 0.5 before, 0.07 after epoch 1, 0.01 after epoch 2). With rule 'greater', an
# evaluation before training that reached the scheduler or save_best would leave traces: lr cut to 1e-3 for
# epoch 2, best_toy_mean_epoch_0.pth kept as the best.
param_scheduler = [dict(type='ReduceOnPlateauLR', monitor='toy/mean', rule='greater', patience=0, factor=0.1,
                        by_epoch=True)]
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=1),
    checkpoint=dict(type='CheckpointHook', interval=1, save_best='toy/mean', rule='greater'))
env_cfg = dict(dist_cfg=dict(backend='nccl', timeout=300))
randomness = dict(seed=0)
