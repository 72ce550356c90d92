"""Check ``unused-params``: parameters without a gradient after one forward/backward make DDP with
``find_unused_parameters=False`` fail ("Expected to have finished reduction in the prior iteration"); the
reverse, ``find_unused_parameters=True`` with none unused, costs a traversal of the graph every step."""
from ...facts.result import CheckResult


def probe_unused_parameters(model, data):
    """Names of the parameters (requires_grad) that get no gradient from one forward/backward of ``model``
    on ``data`` (already scattered: the keyword arguments of ``train_step``/forward). Model state (buffers,
    gradients, train/eval mode) and the global RNGs are restored afterwards."""
    import random

    import numpy as np
    import torch
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    saved_grads = [p.grad for _, p in params]
    saved_buffers = [(b, b.detach().clone()) for b in model.buffers()]
    rng = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    training = model.training
    try:
        for _, p in params:
            p.grad = None
        model.train()
        with torch.enable_grad():
            if hasattr(model, 'train_step'):
                outputs = model.train_step(data, None)
                loss = outputs['loss'] if isinstance(outputs, dict) else outputs
            else:
                losses = model(**data)
                loss = _sum_losses(losses)
            loss.backward()
        return [n for n, p in params if p.grad is None]
    finally:
        for (_, p), g in zip(params, saved_grads):
            p.grad = g
        with torch.no_grad():
            for b, value in saved_buffers:
                b.copy_(value)
        model.train(training)
        random.setstate(rng[0])
        np.random.set_state(rng[1])
        torch.set_rng_state(rng[2])


def _sum_losses(losses):
    import torch
    if torch.is_tensor(losses):
        return losses.sum()
    return sum(sum(v.sum() for v in value) if isinstance(value, (list, tuple)) else value.sum()
               for key, value in losses.items() if 'loss' in key)


def _group_names(names, limit=4):
    groups = {}
    for n in names:
        groups.setdefault(n.rsplit('.', 1)[0] if '.' in n else n, []).append(n)
    items = sorted(groups.items())
    text = ', '.join('%s (%d)' % (g, len(v)) for g, v in items[:limit])
    return text + (', ... (%d modules)' % len(items) if len(items) > limit else '')


def judge_unused(unused, find_unused, distributed=True, total=None):
    """``unused``: parameter names without gradient (None: not probed)."""
    if unused is None:
        return CheckResult('unused-params', 'SKIP', 'model not probed (opt-in: --probe-model / '
                           'runner.probe_model=True)', '')
    setting = 'find_unused_parameters=%s' % bool(find_unused)
    if unused and not find_unused:
        return CheckResult(
            'unused-params', 'FAIL' if distributed else 'WARN',
            '%d parameter tensor(s) get no gradient in one forward/backward: %s; DDP with %s fails at the next '
            'iteration: "Expected to have finished reduction in the prior iteration before starting a new one"'
            % (len(unused), _group_names(unused), setting),
            'find_unused_parameters = True in the config (a graph traversal per step), or remove the unused '
            'module / freeze it (requires_grad=False); TORCH_DISTRIBUTED_DEBUG=DETAIL names them in a real run')
    if not unused and find_unused:
        return CheckResult(
            'unused-params', 'WARN',
            'find_unused_parameters=True but every parameter%s got a gradient in one forward/backward: DDP '
            'traverses the autograd graph every iteration for nothing'
            % (' (%d tensors)' % total if total else ''),
            'find_unused_parameters = False (keep True only if some branches are skipped on some batches)')
    if unused:
        return CheckResult('unused-params', 'OK', '%d parameter tensor(s) without gradient (%s), handled by %s'
                           % (len(unused), _group_names(unused), setting), '')
    return CheckResult('unused-params', 'OK', 'every parameter got a gradient in one forward/backward (%s)'
                       % setting, '')
