# Pitfall of the spawn start method: a transform holding a lambda cannot be pickled into the workers.
# mp_start_method is applied by mmdet's and mmdet3d's own tools/train.py (setup_multi_processes).
_base_ = ['./toy_pipeline.py']
pipeline = [dict(type='ToyScaleLambda', factor=1.0)]
mp_start_method = 'spawn'
data = dict(
    train=dict(pipeline=pipeline),
    val=dict(pipeline=pipeline),
    test=dict(pipeline=pipeline),
    train_dataloader=dict(workers_per_gpu=1),
    val_dataloader=dict(workers_per_gpu=1),
    test_dataloader=dict(samples_per_gpu=1, workers_per_gpu=0))
