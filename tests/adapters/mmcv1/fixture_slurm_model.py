"""Test-only model of the Slurm launch tests: the marked toy model (``fixture_markers``) that raises on one
chosen sample (``fail_on_sample``), so that the failing rank has inferred a few batches first and its peers
are mid-inference when srun stops them."""
from mmdet.models import DETECTORS

from .fixture_markers import ToyMarkedRegressor


@DETECTORS.register_module()
class ToyFailOnSampleRegressor(ToyMarkedRegressor):
    def __init__(self, fail_on_sample=None, **kwargs):
        super(ToyFailOnSampleRegressor, self).__init__(**kwargs)
        self.fail_on_sample = fail_on_sample

    def forward(self, x, img_metas, target=None, return_loss=True, rescale=False, **kwargs):
        results = super(ToyFailOnSampleRegressor, self).forward(x, img_metas, target, return_loss, rescale,
                                                                **kwargs)
        if not return_loss and self.fail_on_sample in [m['sample_idx'] for m in img_metas]:
            raise RuntimeError('planted inference failure on sample {}'.format(self.fail_on_sample))
        return results
