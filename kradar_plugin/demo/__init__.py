"""kradar_plugin.demo: the demo dataset (EchoFusion-layout infos and BEV tensors), the K-Radar-format demo
tree and the tiny detector the demo trains. ``data`` and ``tree`` need numpy only; ``tiny_radar`` registers
``TinyRadarPeakDetector`` in mmdet and is imported by the registration only when mmdet is importable."""
