# The toy config with a planted sampler bug: every rank's validation loader visits the whole dataset.
_base_ = ['./toy.py']
custom_hooks = [dict(type='WholeDatasetSamplerHook')]
