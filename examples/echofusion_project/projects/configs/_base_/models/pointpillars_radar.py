# A small PointPillars branch of mmdet3d's MVXFasterRCNN on radar points (x, y, z, power); it outputs
# [{'pts_bbox': {'boxes_3d', 'scores_3d', 'labels_3d'}}] per sample, like EchoFusion's detectors. Its head
# keeps the max_num best boxes without NMS, as EchoFusion's (mmdet3d's NMS is CUDA-only in 0.17.x).
voxel_size = [0.4, 0.4, 8.0]
model = dict(
    type='MVXFasterRCNN',
    pts_voxel_layer=dict(
        max_num_points=8,
        point_cloud_range=[0, -6.4, -2.0, 72.0, 6.4, 6.0],
        voxel_size=voxel_size,
        max_voxels=(6000, 6000)),
    pts_voxel_encoder=dict(
        type='HardVFE',
        in_channels=4,
        feat_channels=[16],
        with_distance=False,
        with_cluster_center=True,
        with_voxel_center=True,
        voxel_size=voxel_size,
        point_cloud_range=[0, -6.4, -2.0, 72.0, 6.4, 6.0],
        norm_cfg=dict(type='BN1d', eps=1e-3, momentum=0.01)),
    pts_middle_encoder=dict(type='PointPillarsScatter', in_channels=16, output_shape=[32, 180]),
    pts_backbone=dict(
        type='SECOND',
        in_channels=16,
        layer_nums=[1, 1],
        layer_strides=[1, 2],
        out_channels=[16, 32]),
    pts_neck=dict(
        type='SECONDFPN',
        in_channels=[16, 32],
        upsample_strides=[1, 2],
        out_channels=[16, 16]),
    pts_bbox_head=dict(
        type='NMSFreeAnchor3DHead',  # the project's: no NMS at inference (EchoFusion's head is NMS-free)
        num_classes=1,
        in_channels=32,
        feat_channels=32,
        use_direction_classifier=True,
        anchor_generator=dict(
            type='AlignedAnchor3DRangeGenerator',
            ranges=[[0, -6.4, -0.2, 72.0, 6.4, -0.2]],
            sizes=[[4.5, 1.85, 1.55]],
            rotations=[0, 1.57],
            reshape_out=True),
        diff_rad_by_sin=True,
        bbox_coder=dict(type='DeltaXYZWLHRBBoxCoder'),
        loss_cls=dict(type='FocalLoss', use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0),
        loss_bbox=dict(type='SmoothL1Loss', beta=1.0 / 9.0, loss_weight=2.0),
        loss_dir=dict(type='CrossEntropyLoss', use_sigmoid=False, loss_weight=0.2)),
    train_cfg=dict(
        pts=dict(
            assigner=dict(
                type='MaxIoUAssigner',
                iou_calculator=dict(type='BboxOverlapsNearest3D'),
                pos_iou_thr=0.5,
                neg_iou_thr=0.35,
                min_pos_iou=0.35,
                ignore_iof_thr=-1),
            allowed_border=0,
            pos_weight=-1,
            debug=False)),
    test_cfg=dict(pts=dict(score_thr=0.05, max_num=30)))  # NMSFreeAnchor3DHead: the 30 best above 0.05
