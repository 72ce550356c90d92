"""``kradar_plugin.loading.load_checkpoint`` vs ``torch.load`` on state dicts of 100 MB and 1 GB.

Speed: both loaders in the same process, alternating, best of ``--repeat`` (the file is in the page cache
after the first read: both read from memory). Memory: each loader once in a fresh child process; the peak
resident size (Linux ``VmHWM``, reset after importing torch and the plugin) above the size then, compared with the
file's size. Goals: time ratio <= 1.3, peak above torch's own <= 0.2 x the file size.

    .venv/bin/python benchmarks/bench_checkpoint_load.py [--sizes-mb 100 1000] [--repeat 3] [--legacy]
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def write_state_dict(path, megabytes, legacy=False):
    """A ResNet-like state dict: conv weights of a few sizes, BN buffers, one large fc, ~``megabytes`` MB."""
    import torch
    sd = collections.OrderedDict()
    total, i = 0, 0
    target = megabytes * (1 << 20)
    while total < target:
        c = (64, 128, 256, 512)[i % 4]
        w = torch.randn(c, c, 3, 3)
        sd['layer{}.conv.weight'.format(i)] = w
        for name in ('weight', 'bias', 'running_mean', 'running_var'):
            sd['layer{}.bn.{}'.format(i, name)] = torch.randn(c)
        sd['layer{}.bn.num_batches_tracked'.format(i)] = torch.tensor(7)
        total += w.numel() * 4 + 4 * c * 4 + 8
        i += 1
    checkpoint = dict(state_dict=sd, meta=dict(epoch=12, iter=1200, mmcv_version='1.7.0'))
    torch.save(checkpoint, path, _use_new_zipfile_serialization=not legacy)
    return len(sd)


_CHILD = """
import gc, sys, torch
sys.path.insert(0, {root!r})
from kradar_plugin.loading import safe_checkpoint, safe_load, torch_archive, checkpoint_pickle, tensor_builder

def status(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1]) * 1024

gc.collect()
with open('/proc/self/clear_refs', 'w') as f:     # resets the peak (VmHWM) to the current size
    f.write('5')
base = status('VmRSS')
obj = torch.load({path!r}, map_location='cpu') if {which!r} == 'torch' else safe_checkpoint.load_checkpoint({path!r})
print(base, status('VmHWM'))
"""


def _peak_child(path, which):
    """Peak resident bytes a fresh process adds while loading ``path`` with ``which``."""
    code = _CHILD.format(root=ROOT, path=path, which=which)
    out = subprocess.check_output([sys.executable, '-c', code]).decode().split()
    return int(out[1]) - int(out[0])


def _same(a, b):
    import torch
    sa, sb = a['state_dict'], b['state_dict']
    return list(sa) == list(sb) and all(torch.equal(sa[k], sb[k]) for k in sa) and a['meta'] == b['meta']


def bench(megabytes, repeat, legacy, folder):
    import torch
    from kradar_plugin.loading import load_checkpoint
    path = os.path.join(folder, 'sd_{}mb{}.pth'.format(megabytes, '_legacy' if legacy else ''))
    tensors = write_state_dict(path, megabytes, legacy)
    size = os.path.getsize(path)
    times = {'torch': [], 'plugin': []}
    for _ in range(repeat):
        for which in ('torch', 'plugin'):
            start = time.perf_counter()
            obj = torch.load(path, map_location='cpu') if which == 'torch' else load_checkpoint(path)
            times[which].append(time.perf_counter() - start)
            if which == 'plugin':
                assert _same(obj, torch.load(path, map_location='cpu')), 'loaded tensors differ from torch.load'
            del obj
    peaks = dict((which, _peak_child(path, which)) for which in ('torch', 'plugin'))
    os.remove(path)
    t_torch, t_plugin = min(times['torch']), min(times['plugin'])
    return dict(size=size, tensors=tensors, torch_s=t_torch, plugin_s=t_plugin, ratio=t_plugin / t_torch,
                peak_torch=peaks['torch'], peak_plugin=peaks['plugin'],
                extra=(peaks['plugin'] - peaks['torch']) / float(size))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes-mb', type=int, nargs='+', default=[100, 1000])
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--legacy', action='store_true', help='the legacy (non-zip) format')
    parser.add_argument('--dir', default=None, help='where to write the files (default: a temporary folder)')
    args = parser.parse_args(argv)
    import torch
    print('torch {}, python {}.{}, {} format'.format(torch.__version__, sys.version_info[0], sys.version_info[1],
                                                    'legacy' if args.legacy else 'zip'))
    print('| file | tensors | torch.load | load_checkpoint | ratio | peak torch.load | peak load_checkpoint | '
          'extra peak / file |')
    print('|---|---|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        for mb in args.sizes_mb:
            r = bench(mb, args.repeat, args.legacy, folder)
            print('| {:.0f} MB | {} | {:.3f} s | {:.3f} s | {:.2f}x | {:.0f} MB | {:.0f} MB | {:+.2f} |'.format(
                r['size'] / 1e6, r['tensors'], r['torch_s'], r['plugin_s'], r['ratio'], r['peak_torch'] / 1e6,
                r['peak_plugin'] / 1e6, r['extra']))
            sys.stdout.flush()


if __name__ == '__main__':
    main()
