"""The mmengine side of the evaluation inference session (``kradar_plugin.distributed.inference_session``),
the mirror of ``adapters/mmcv1/inference.py``: while ``ValLoop.run`` runs, its data loader is the session's
and its ``run_iter`` goes through the session. A sample's "result" is what each metric's ``process``
appended for it (one entry per metric): recorded ones are appended back without ``val_step``, a skipped
sample appends ``None`` (removed again, with its ground truth, before ``compute_metrics``).
"""
from kradar_plugin.distributed import run_context
from kradar_plugin.distributed.inference_record import INTERVAL_SAMPLES
from kradar_plugin.distributed.inference_session import Options, open_session
from kradar_plugin.distributed.loader_proxy import LoaderProxy


class Placeholder(object):
    """Stands for a batch whose samples the record holds (or that all failed)."""

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size


def guard_inference(runner, loop, tag_of):
    """Route ``loop.run`` through an inference session (instance attributes; the class is untouched)."""
    if getattr(loop, '_kradar_inference', False):
        return loop
    run, run_iter = loop.run, loop.run_iter

    def recorded_run():
        context = run_context.current()
        loader = loop.dataloader
        metrics = list(getattr(loop.evaluator, 'metrics', []))
        resume, skip, every = context.inference

        def start():
            context.session = open_session(loader, runner.work_dir, tag_of(runner), runner.model,
                                           Options(resume=resume, skip_max=skip,
                                                   interval_samples=every or INTERVAL_SAMPLES, record=every != 0),
                                           runner.logger)
            return context.session

        proxy = LoaderProxy(loader, start, Placeholder)

        def infer(idx, batch):
            sizes = [len(m.results) for m in metrics]
            run_iter(idx, batch)
            new = [m.results[n:] for m, n in zip(metrics, sizes)]
            for m, n in zip(metrics, sizes):
                del m.results[n:]
            if len(set(len(x) for x in new)) > 1:
                raise RuntimeError('the metrics appended {} results for one batch: one per sample expected'.format(
                    [len(x) for x in new]))
            return [list(unit) for unit in zip(*new)]

        def recorded_iter(idx, data_batch):
            session = proxy.session
            units = session.run_batch(lambda: infer(idx, data_batch),
                                      lambda i: infer(idx, loader.collate_fn([loader.dataset[i]]))[0])
            for unit in units:
                for number, metric in enumerate(metrics):
                    metric.results.append(None if unit is None else unit[number])

        loop.dataloader, loop.run_iter = proxy, recorded_iter
        try:
            return run()
        finally:
            loop.dataloader = loader
            del loop.run_iter
            if proxy.session is not None:
                proxy.session.restore_signals()
            context.session = None

    loop.run = recorded_run
    loop._kradar_inference = True
    return loop
