# A K-Radar config in EchoFusion's shape (plugin=True, plugin_dir, custom_imports, _base_ files,
# evaluation with the test pipeline, dist_params), around a real mmdet3d detector small enough for a CPU.
#   tools/dist_train.sh projects/configs/kradar/pointpillars_kradar_radar.py 2 [--eval-only]
_base_ = [
    '../_base_/models/pointpillars_radar.py',
    '../_base_/default_runtime.py',
]
plugin = True
plugin_dir = 'projects/mmdet3d_plugin/'
custom_imports = dict(imports=['projects.mmdet3d_plugin', 'kradar_plugin'], allow_failed_imports=False)

dataset_type = 'KRadarDataset'
data_root = 'data/kradar/'
class_names = ['Sedan']
point_cloud_range = [0, -6.4, -2.0, 72.0, 6.4, 6.0]
input_modality = dict(use_lidar=False, use_camera=False, use_radar=True)
bev_grid = dict(x_min=0.0, y_min=-16.0, cell=0.5)

train_pipeline = [
    dict(type='LoadKRadarPointsFromBEV', coord_type='LIDAR', point_cloud_range=point_cloud_range, **bev_grid),
    dict(type='LoadAnnotations3D', with_bbox_3d=True, with_label_3d=True, with_attr_label=False),
    dict(type='ObjectRangeFilter', point_cloud_range=point_cloud_range),
    dict(type='ObjectNameFilter', classes=class_names),
    dict(type='PointsRangeFilter', point_cloud_range=point_cloud_range),
    dict(type='DefaultFormatBundle3D', class_names=class_names),
    dict(type='Collect3D', keys=['points', 'gt_bboxes_3d', 'gt_labels_3d']),
]
test_pipeline = [
    dict(type='LoadKRadarPointsFromBEV', coord_type='LIDAR', point_cloud_range=point_cloud_range, **bev_grid),
    dict(type='MultiScaleFlipAug3D',
         img_scale=(1333, 800),
         pts_scale_ratio=1,
         flip=False,
         transforms=[
             dict(type='PointsRangeFilter', point_cloud_range=point_cloud_range),
             dict(type='DefaultFormatBundle3D', class_names=class_names, with_label=False),
             dict(type='Collect3D', keys=['points']),
         ]),
]
data = dict(
    samples_per_gpu=4,
    workers_per_gpu=0,
    train=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file=data_root + 'kradar_infos_train.pkl',
        split='',
        pipeline=train_pipeline,
        classes=class_names,
        modality=input_modality,
        test_mode=False,
        radar_prefix='radar_bev',
        box_type_3d='LiDAR'),
    val=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file=data_root + 'kradar_infos_val.pkl',
        split='',
        pipeline=test_pipeline,
        classes=class_names,
        modality=input_modality,
        test_mode=True,
        radar_prefix='radar_bev'),
    test=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file=data_root + 'kradar_infos_val.pkl',
        split='',
        pipeline=test_pipeline,
        classes=class_names,
        modality=input_modality,
        test_mode=True,
        radar_prefix='radar_bev'))


optimizer = dict(type='AdamW', lr=3e-3, weight_decay=0.01)
optimizer_config = dict(grad_clip=dict(max_norm=35, norm_type=2))
lr_config = dict(policy='step', step=[5])
total_epochs = 6
runner = dict(type='EpochBasedRunner', max_epochs=total_epochs)
evaluation = dict(interval=1, pipeline=test_pipeline)
dist_params = dict(backend='gloo', timeout=120)
find_unused_parameters = False
