"""Tests of the framework adapters, one package per OpenMMLab generation as in kradar_plugin/adapters."""
