# The toy config whose run ends by saving the model's state dict as wrapped (DDP: 'module.' prefixes).
_base_ = ['./toy.py']
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components',
                               'tests.adapters.mmcv1.fixture_pitfalls'],
                      allow_failed_imports=False)
custom_hooks = [dict(type='SaveWrappedStateDictHook')]
