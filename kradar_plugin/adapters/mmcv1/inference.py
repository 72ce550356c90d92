"""The mmcv 1.x side of the evaluation inference session (``kradar_plugin.distributed.inference_session``):
during an ``EvalHook``'s ``_do_evaluate`` the hook's data loader and the runner's model are replaced by
proxies, so that mmcv's / mmdet's own ``single_gpu_test`` / ``multi_gpu_test`` loop runs unchanged while
the session names a failed sample, records the predictions, hands back recorded ones (``model(**data)`` is
not called for them) and, when skipping, fills a failed sample's place with ``None`` (ranks in step).
"""
from kradar_plugin.distributed import run_context
from kradar_plugin.distributed.inference_record import INTERVAL_SAMPLES
from kradar_plugin.distributed.inference_session import Options, open_session
from kradar_plugin.distributed.loader_proxy import LoaderProxy

PLACEHOLDER = '_kradar_recorded'


def _placeholder(size):
    """What stands for a batch of ``size`` recorded samples in the 1.x test loop (``ModelProxy`` knows it)."""
    return {PLACEHOLDER: size}


class ModelProxy(object):
    """The runner's model as the test loop sees it: each call goes through the session."""

    def __init__(self, model, loader):
        self.__dict__.update(model=model, loader=loader)

    def __getattr__(self, name):
        return getattr(self.__dict__['model'], name)

    def __setattr__(self, name, value):
        setattr(self.__dict__['model'], name, value)

    def __call__(self, *args, **kwargs):
        model, session = self.__dict__['model'], self.__dict__['loader'].session
        if session is None:
            return model(*args, **kwargs)
        if PLACEHOLDER in kwargs:
            return session.run_batch(None)

        def one(index):
            data = session.loader.collate_fn([session.dataset[index]])
            return list(model(*args, **dict(kwargs, **data)))[0]
        return session.run_batch(lambda: model(*args, **kwargs), one)


def options(context):
    resume, skip, every = context.inference
    return Options(resume=resume, skip_max=skip, interval_samples=every or INTERVAL_SAMPLES, record=every != 0)


def recorded_evaluation(hook, do_evaluate, tag_of):
    """``hook._do_evaluate`` run through an inference session (``tag_of(runner)``: the results tag)."""

    def run(runner):
        context = run_context.current()
        loader, model = hook.dataloader, runner.model

        def start():
            context.session = open_session(loader, runner.work_dir, tag_of(runner), model, options(context),
                                           runner.logger)
            return context.session

        proxy = LoaderProxy(loader, start, _placeholder)
        hook.dataloader, runner.model = proxy, ModelProxy(model, proxy)
        try:
            return do_evaluate(runner)
        finally:
            hook.dataloader, runner.model = loader, model
            if proxy.session is not None:
                proxy.session.restore_signals()
            context.session = None
    return run
