# TinyRadarPeakDetector (kradar_plugin.demo.tiny_radar): deterministic BEV peak finder with learnable box sizes,
# height and yaw offsets; meaningful detections on the demo data with its initial parameters.
model = dict(
    type='TinyRadarPeakDetector',
    classes=['Sedan'],
    anchor_classes=['Sedan', 'Bus or Truck'],
    anchor_sizes=[[4.5, 1.85, 1.55], [10.0, 2.55, 3.15]],  # (l, w, h) priors, metres
    grid=dict(x_min=0.0, y_min=-16.0, cell=0.5),  # kradar_plugin.demo.data.DEMO_GRID
    score_thr=0.1,
    max_num=20,
    window=6,
    output='flat')
