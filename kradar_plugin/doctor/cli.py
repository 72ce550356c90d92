"""``kradar-doctor``: check this (or a planned) environment; exit 1 on any FAIL."""
import argparse
import sys

from ..facts.cuda_compile import parse_archs
from ..version import __version__
from .checks import collect_facts, evaluate
from .report import format_report, to_json


def build_parser():
    p = argparse.ArgumentParser(
        prog='kradar-doctor',
        description='Names broken version pairs (numba/numpy/CUDA/driver, mmcv/mmdet/mmdet3d/mmengine, OpenMMLab '
                    '1.x/2.x mixes, yapf, conda numpy), packages that fail to import, a checkpoint of the other '
                    'mmdet3d box convention, and launch pitfalls (/dev/shm, sharing strategy, --local-rank, distributed '
                    'timeout, samplers, worker pickling, CUDA in workers, unused parameters, leftover processes) with '
                    'the command that fixes each. Exit code 1 if any check FAILs.')
    p.add_argument('--version', action='version', version='%(prog)s ' + __version__)
    p.add_argument('--assume', metavar='K=V,...',
                   help='judge these versions instead of the installed ones (not imported), e.g. '
                        'python=3.7.16,torch=1.10.0,cuda=11.3,mmcv-full=1.4.0,numba=0.48.0,numpy=1.20.3')
    p.add_argument('--config', help='mmcv config: workers_per_gpu, gpus, dist_params timeout, evaluation; without '
                                    '--quick also builds its datasets and loaders in 2 gloo processes: samplers, '
                                    'pickling into workers, CUDA in workers/at import, /dev/shm vs batches')
    p.add_argument('--probe-model', action='store_true',
                   help='with --config: build the model and run one CPU forward/backward on one training batch '
                        '(parameters without gradient vs find_unused_parameters)')
    p.add_argument('--train-script', help='training script to check for --local_rank/--local-rank handling')
    p.add_argument('--checkpoint', metavar='PATH',
                   help="checkpoint to evaluate: WARN when its meta's mmdet3d_version uses the other box convention "
                        'than the installed mmdet3d (read without torch)')
    p.add_argument('--compile-test', action='store_true',
                   help="compile the installed mmdet3d's and the plugin's rotated-IoU kernels with this numba and "
                        "the CUDA toolkit it uses (libNVVM -> PTX, ptxas -> SASS) in a subprocess, no GPU needed; "
                        'with a GPU also run the plugin kernel')
    p.add_argument('--gpu-arch', metavar='sm_XY,...',
                   help='with --compile-test (implied): the GPU architectures to compile for, e.g. sm_80,sm_90 '
                        "(default: this machine's GPU, else sm_70,sm_80,sm_90)")
    p.add_argument('--quick', action='store_true', help='no subprocess probes (what tools/train.py runs)')
    p.add_argument('--json', action='store_true', help='print a JSON document instead of the report')
    p.add_argument('--only', metavar='STATUS,...', help='show only these statuses, e.g. FAIL,WARN')
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        if args.gpu_arch:
            parse_archs(args.gpu_arch)   # a bad --gpu-arch stops before the probes run
        facts = collect_facts(assume=args.assume, config=args.config, train_script=args.train_script,
                              compile_test=args.compile_test, quick=args.quick, checkpoint=args.checkpoint,
                              probe_model=args.probe_model, gpu_arch=args.gpu_arch)
    except ValueError as e:
        sys.stderr.write('kradar-doctor: error: %s\n' % e)
        return 2
    results = evaluate(facts)
    if args.json:
        print(to_json(results, facts))
    else:
        statuses = tuple(s.strip().upper() for s in args.only.split(',')) if args.only else None
        text = format_report(results, statuses=statuses, color=sys.stdout.isatty())
        print(text or 'kradar-doctor: nothing to show')
    return 1 if any(r.status == 'FAIL' for r in results) else 0
