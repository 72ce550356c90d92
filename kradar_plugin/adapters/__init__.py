"""Framework adapters, one package per OpenMMLab generation, mirroring each other file for file:

``mmcv1``    mmcv-full 1.x + mmdet 2.x + mmdet3d 0.17-1.0rc (EchoFusion's stack)
``mmengine`` mmengine + mmcv 2.x + mmdet 3.x + mmdet3d 1.x

Both call the framework-free core (``kradar_plugin.distributed``, ``kradar_plugin.evaluation``); a concept
missing on one side is a missing file. Imported by ``kradar_plugin._registration`` only when the framework
is loaded.
"""
