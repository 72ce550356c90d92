# K-Radar demo dataset (tools/create_demo_data.py --out data/demo): EchoFusion-format info pickles and one
# small BEV radar tensor per frame, read by kradar_plugin's KRadarDataset (registered as KRadarPluginDataset).
dataset_type = 'KRadarPluginDataset'
data_root = 'data/demo/'
class_names = ['Sedan']
# EchoFusion's evaluation ROI: box centre in this range (x, y, z min; x, y, z max) and azimuth (degrees)
pcd_limit_range = [0, -6.4, -2.0, 72.0, 6.4, 6.0]
azi_limit_range = [-50, 50]
meta_keys = ('sample_idx', 'frame_index', 'radar_filename', 'radar_shape')

train_pipeline = [
    dict(type='LoadKRadarTensor'),
    dict(type='LoadKRadarAnnotations'),
    dict(type='KRadarFormatBundle'),
    dict(type='Collect', keys=['radar', 'gt_bboxes_3d', 'gt_labels_3d'], meta_keys=meta_keys),
]
test_pipeline = [
    dict(type='LoadKRadarTensor'),
    dict(type='KRadarFormatBundle'),
    dict(type='Collect', keys=['radar'], meta_keys=meta_keys),
]
_common = dict(type=dataset_type, data_root=data_root, classes=class_names, radar_key='bev_path',
               pcd_limit_range=pcd_limit_range, azi_limit_range=azi_limit_range)
data = dict(
    samples_per_gpu=4,
    workers_per_gpu=0,
    # mmdet 2.28's train_detector builds the validation loader with samples_per_gpu=1, workers_per_gpu=2
    # unless told otherwise
    val_dataloader=dict(samples_per_gpu=8, workers_per_gpu=0),
    test_dataloader=dict(samples_per_gpu=8, workers_per_gpu=0),
    train=dict(ann_file='kradar_infos_train.pkl', pipeline=train_pipeline, test_mode=False, **_common),
    val=dict(ann_file='kradar_infos_val.pkl', pipeline=test_pipeline, test_mode=True, **_common),
    test=dict(ann_file='kradar_infos_val.pkl', pipeline=test_pipeline, test_mode=True, **_common),
)
# protocol: 'legacy' (EchoFusion's numbers), 'revised' or 'fixed'; passed to dataset.evaluate
evaluation = dict(interval=1, protocol='legacy')
