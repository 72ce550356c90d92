"""Judge of ``torch-gpu``: torch's CUDA build has kernels for this GPU; ``has_gpu``, which the GPU judges share."""
from ... import facts as F
from ...facts.versions import parse_version
from ..report import Finding


def has_gpu(facts):
    return bool(facts.get('gpus')) or bool(facts.get('gpu-cc'))


def _cc_supported(cc, arch_list):
    """Whether torch kernels for arch_list run on compute capability cc ('8.6')."""
    v = parse_version(cc)
    major, minor = v.part(0), v.part(1)
    for arch in arch_list:
        kind, _, digits = arch.partition('_')
        if not digits.isdigit():
            continue
        a_major, a_minor = int(digits[:-1]), int(digits[-1])
        if kind == 'sm' and a_major == major and a_minor <= minor:
            return True  # cubins run on later minors of the same major
        if kind == 'compute' and (a_major, a_minor) <= (major, minor):
            return True  # PTX is JIT-compiled forward
    return False


def torch_gpu(facts):
    if not has_gpu(facts):
        return Finding('SKIP', 'no GPU: torch runs on CPU')
    torch_cuda = facts.get('torch-cuda')
    if torch_cuda == 'cpu':
        return Finding('WARN', 'torch %s is a CPU-only build on a machine with %s GPU(s)'
                       % (facts['torch'], facts.get('gpus')),
                       'pip install torch==%s -f https://download.pytorch.org/whl/torch_stable.html (a +cuXXX '
                       'build)' % parse_version(facts['torch']).public)
    for cc in facts.get('gpu-cc') or ():
        arch = facts.get('torch-arch')
        if arch:
            ok = _cc_supported(cc, arch)
            have = ' '.join(arch)
        else:
            max_cc = F.torch_cuda_max_cc(torch_cuda)
            ok = max_cc is None or parse_version(cc) <= max_cc
            have = 'up to sm_%s' % (max_cc or '?').replace('.', '')
        if not ok:
            return Finding('FAIL', 'torch %s (CUDA %s) has no kernels for this GPU (compute capability %s; built '
                                   'for %s): "no kernel image is available"' % (facts['torch'], torch_cuda, cc, have),
                           'install a torch built for a newer CUDA that supports sm_%s' % cc.replace('.', ''))
    return None
