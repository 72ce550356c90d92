# Pitfalls of the training side: the project's own training loader whose sampler ignores rank, and a model
# with an auxiliary head that gets no gradient while find_unused_parameters is False (the default).
_base_ = ['./toy.py']
custom_imports = dict(imports=['kradar_plugin', 'tests.adapters.mmcv1.fixture_components',
                               'tests.adapters.mmcv1.fixture_pitfalls',
                               'tests.adapters.mmcv1.fixture_project_builder'], allow_failed_imports=False)
model = dict(type='ToyTwoHeadRegressor')
find_unused_parameters = False
