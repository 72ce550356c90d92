"""``eval_samples``: every evaluation of the run uses the first N validation samples.

The validation dataloader is rebuilt by mmengine's own ``Runner.build_dataloader`` around the first N
samples of the built dataset (``BaseDataset.get_subset``, else ``torch.utils.data.Subset``), so the sampler,
batch size, collate function and workers stay those of the config; ``sample_idx`` keeps its values
(0 .. N-1 are the same frames). A metric that reads its ground truth from an mmengine-format annotation
file (``ann_file`` holding ``{'metainfo', 'data_list'}``, e.g. mmdet3d's ``KittiMetric``, which asserts one
result per ``data_list`` entry) gets a copy of that file with the first N entries, under
``work_dir/eval_subset/``.
"""
import copy
import os.path as osp


def first_samples(dataset, num_samples):
    """A dataset of the first ``num_samples`` samples of ``dataset``."""
    get_subset = getattr(dataset, 'get_subset', None)
    if callable(get_subset):
        try:
            return get_subset(num_samples)
        except NotImplementedError:
            pass
    from torch.utils.data import Subset
    return Subset(dataset, list(range(num_samples)))


def subset_val_loop(runner, loop, num_samples):
    """Restrict ``loop`` (a built mmengine ``ValLoop``) to its first ``num_samples`` samples. Returns the
    number of samples it evaluates."""
    dataset = loop.dataloader.dataset
    size = len(dataset)
    if num_samples >= size:
        runner.logger.info('kradar_plugin eval_samples=%d: the validation set has %d samples, all evaluated',
                           num_samples, size)
        return size
    dataloader_cfg = runner.cfg.get('val_dataloader', None) if runner.cfg is not None else None
    if not dataloader_cfg:
        raise RuntimeError('eval_samples needs the val_dataloader config to rebuild the validation loader; '
                           'this runner was given a built DataLoader')
    dataloader_cfg = copy.deepcopy(dict(dataloader_cfg))
    dataloader_cfg['dataset'] = first_samples(dataset, num_samples)
    randomness = getattr(runner, '_randomness_cfg', None) or {}
    loop.dataloader = runner.build_dataloader(dataloader_cfg, seed=runner.seed,
                                              diff_rank_seed=randomness.get('diff_rank_seed', False))
    for metric in getattr(loop.evaluator, 'metrics', []):
        subset_ann_file(metric, num_samples, runner)
    runner.logger.info('kradar_plugin eval_samples=%d: evaluating the first %d of %d validation samples',
                       num_samples, num_samples, size)
    return num_samples


def subset_ann_file(metric, num_samples, runner):
    """Point ``metric.ann_file`` at a copy of its mmengine-format annotation file holding the first
    ``num_samples`` entries of ``data_list``. Returns the new path, or None when nothing applies."""
    ann_file = getattr(metric, 'ann_file', None)
    if not isinstance(ann_file, str) or not osp.isfile(ann_file):
        return None
    from mmengine.dist import barrier, get_rank
    from mmengine.fileio import dump, load
    data = load(ann_file)
    if not (isinstance(data, dict) and isinstance(data.get('data_list'), list)
            and len(data['data_list']) > num_samples):
        return None
    stem, ext = osp.splitext(osp.basename(ann_file))
    path = osp.abspath(osp.join(runner.work_dir, 'eval_subset', '{}_first{}{}'.format(stem, num_samples, ext)))
    if get_rank() == 0:
        subset = dict(data)
        subset['data_list'] = data['data_list'][:num_samples]
        dump(subset, path)
    barrier()
    metric.ann_file = path
    runner.logger.info('kradar_plugin eval_samples=%d: %s reads its ground truth from %s', num_samples,
                       type(metric).__name__, path)
    return path
