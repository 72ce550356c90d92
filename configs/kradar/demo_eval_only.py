# The demo: tools/dist_train.sh configs/kradar/demo_eval_only.py 2 --eval-only
# (make demo). Generate the data first: python tools/create_demo_data.py --out data/demo
_base_ = [
    '../_base_/datasets/kradar_demo.py',
    '../_base_/models/tiny_radar.py',
    '../_base_/schedules/demo.py',
    '../_base_/default_runtime.py',
]
custom_imports = dict(imports=['kradar_plugin'], allow_failed_imports=False)
data_root = 'data/demo/'
runner = dict(type='EpochBasedRunner', max_epochs=1)
evaluation = dict(interval=1, protocol='legacy')
dist_params = dict(backend='gloo', timeout=120)
data = dict(
    samples_per_gpu=4,
    workers_per_gpu=0,
    train=dict(data_root=data_root),
    val=dict(data_root=data_root),
    test=dict(data_root=data_root))
