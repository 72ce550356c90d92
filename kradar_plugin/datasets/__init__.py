"""kradar_plugin.datasets: only the documented alias ``kradar_plugin.datasets.patch_echofusion`` (the name
users' configs and earlier docs give in ``custom_imports``). The mmcv 1.x dataset, pipelines and EchoFusion
patch live in ``kradar_plugin.adapters.mmcv1``; the demo data in ``kradar_plugin.demo``."""
