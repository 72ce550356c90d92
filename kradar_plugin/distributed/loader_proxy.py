"""The evaluation loop's data loader while an inference session runs, for both framework generations: the same
length, dataset and attributes as the loader it stands for, and batches from the session (begun, a collective,
when the loop starts iterating). ``placeholder(n)`` makes what stands for a batch of ``n`` samples the record
already holds: each adapter's loop recognises its own."""


class LoaderProxy(object):
    """``loader`` as the loop sees it; ``start()`` opens the session when iteration begins."""

    def __init__(self, loader, start, placeholder):
        self.loader, self.start, self.placeholder, self.dataset = loader, start, placeholder, loader.dataset
        self.session = None

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self.session = self.start()
        return self.session.batches(lambda group: self.placeholder(len(group.indices)))

    def __getattr__(self, name):
        return getattr(self.loader, name)
