# OpenMMLab 2.0 (mmengine / mmcv 2.x / mmdet 3.x / mmdet3d 1.x): K-Radar-format data (EchoFusion info
# pickles + BEV radar tensors, `tools/create_demo_data.py`) with a real mmdet3d 1.x detector small enough for
# a CPU -- PointPillars (`VoxelNet`) on radar points -- and the K-Radar metric.
#
#   mmdet3d's own, unmodified tools/train.py (any launcher):
#     python tools/train.py configs/mm2/pointpillars_kradar_radar.py \
#         --cfg-options runner_type=EvalOnlyRunner [eval_mode=first] [eval_samples=20] [load_from=ckpt.pth]
#     KRADAR_EVAL_ONLY=1 python tools/train.py configs/mm2/pointpillars_kradar_radar.py
#   kradar_plugin's: python -m kradar_plugin.adapters.mmengine.train configs/mm2/pointpillars_kradar_radar.py --eval-only
custom_imports = dict(imports=['kradar_plugin'], allow_failed_imports=False)
default_scope = 'mmdet3d'

data_root = 'data/kradar_mm2/'
class_names = ['Sedan']
metainfo = dict(classes=class_names)
point_cloud_range = [0, -6.4, -2.0, 72.0, 6.4, 6.0]
voxel_size = [0.4, 0.4, 8.0]
# BEV tensor -> radar points: cells inside the range above the power threshold, at least the 8 strongest
bev_grid = dict(x_min=0.0, y_min=-16.0, cell=0.5, point_cloud_range=point_cloud_range, min_points=8)

train_pipeline = [
    dict(type='LoadKRadarPointsFromBEV', **bev_grid),
    dict(type='LoadAnnotations3D', with_bbox_3d=True, with_label_3d=True),
    dict(type='ObjectRangeFilter', point_cloud_range=point_cloud_range),
    dict(type='PointsRangeFilter', point_cloud_range=point_cloud_range),
    dict(type='Pack3DDetInputs', keys=['points', 'gt_bboxes_3d', 'gt_labels_3d']),
]
test_pipeline = [
    dict(type='LoadKRadarPointsFromBEV', **bev_grid),
    dict(type='PointsRangeFilter', point_cloud_range=point_cloud_range),
    dict(type='Pack3DDetInputs', keys=['points']),
]
train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type='KRadarDet3DDataset',
        data_root=data_root,
        ann_file='kradar_infos_train.pkl',
        radar_key='bev_path',
        pipeline=train_pipeline,
        metainfo=metainfo,
        test_mode=False,
        box_type_3d='LiDAR'))
val_dataloader = dict(
    batch_size=4,
    num_workers=0,
    persistent_workers=False,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type='KRadarDet3DDataset',
        data_root=data_root,
        ann_file='kradar_infos_val.pkl',
        radar_key='bev_path',
        pipeline=test_pipeline,
        metainfo=metainfo,
        test_mode=True,
        box_type_3d='LiDAR'))
test_dataloader = val_dataloader
# box_convention / dt_z_is_bottom come from the dataset's metainfo (what its GT boxes teach the model)
val_evaluator = dict(type='KRadarMetric', ann_file=data_root + 'kradar_infos_val.pkl', protocol='legacy')
test_evaluator = val_evaluator

model = dict(
    type='VoxelNet',
    data_preprocessor=dict(
        type='Det3DDataPreprocessor',
        voxel=True,
        voxel_layer=dict(
            max_num_points=8,
            point_cloud_range=point_cloud_range,
            voxel_size=voxel_size,
            max_voxels=(6000, 6000))),
    voxel_encoder=dict(
        type='PillarFeatureNet',
        in_channels=4,
        feat_channels=[16],
        with_distance=False,
        voxel_size=voxel_size,
        point_cloud_range=point_cloud_range),
    middle_encoder=dict(type='PointPillarsScatter', in_channels=16, output_shape=[32, 180]),
    backbone=dict(type='SECOND', in_channels=16, layer_nums=[1, 1], layer_strides=[1, 2], out_channels=[16, 32]),
    neck=dict(type='SECONDFPN', in_channels=[16, 32], upsample_strides=[1, 2], out_channels=[16, 16]),
    bbox_head=dict(
        type='Anchor3DHead',
        num_classes=1,
        in_channels=32,
        feat_channels=32,
        use_direction_classifier=True,
        anchor_generator=dict(
            type='AlignedAnchor3DRangeGenerator',
            ranges=[[0, -6.4, -1.0, 72.0, 6.4, -1.0]],   # z: box bottom (the demo's ground is ~-1 m)
            sizes=[[4.5, 1.85, 1.55]],
            rotations=[0, 1.57],
            reshape_out=True),
        diff_rad_by_sin=True,
        bbox_coder=dict(type='DeltaXYZWLHRBBoxCoder'),
        loss_cls=dict(type='mmdet.FocalLoss', use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0),
        loss_bbox=dict(type='mmdet.SmoothL1Loss', beta=1.0 / 9.0, loss_weight=2.0),
        loss_dir=dict(type='mmdet.CrossEntropyLoss', use_sigmoid=False, loss_weight=0.2)),
    train_cfg=dict(
        assigner=dict(
            type='Max3DIoUAssigner',
            iou_calculator=dict(type='mmdet3d.BboxOverlapsNearest3D'),
            pos_iou_thr=0.5,
            neg_iou_thr=0.35,
            min_pos_iou=0.35,
            ignore_iof_thr=-1),
        allowed_border=0,
        pos_weight=-1,
        debug=False),
    test_cfg=dict(
        use_rotate_nms=True,
        nms_across_levels=False,
        nms_thr=0.01,
        score_thr=0.05,
        min_bbox_size=0,
        nms_pre=200,
        max_num=30))

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.01),
    clip_grad=dict(max_norm=35, norm_type=2))
param_scheduler = [dict(type='MultiStepLR', milestones=[20], by_epoch=True, gamma=0.1)]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=2, val_interval=1)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=10),
    param_scheduler=dict(type='ParamSchedulerHook'),
    # save_best: the evaluation before training (eval-only / eval-first) never writes best_*.pth
    checkpoint=dict(type='CheckpointHook', interval=1, save_best='pts_bbox/Sedan/bev@0.5', rule='greater'),
    sampler_seed=dict(type='DistSamplerSeedHook'))
# nccl as GPU configs say; on a machine without CUDA kradar_plugin's runners use gloo. Timeout in seconds.
env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl', timeout=300))
log_processor = dict(type='LogProcessor', window_size=10, by_epoch=True)
log_level = 'INFO'
load_from = None
resume = False
randomness = dict(seed=0)
