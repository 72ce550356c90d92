"""Facts of launching a multi-process job: the launcher's --local-rank spelling, the default process-group
timeout, /dev/shm per DataLoader worker and the file-descriptor limit of tensor sharing."""

# torch.distributed.launch passes --local-rank=N from torch 2.0 on (--local_rank before); torchrun passes
# nothing (LOCAL_RANK env). mmdet3d's tools/train.py declares only --local_rank (environment.md).
TORCH_LOCAL_RANK_DASH = '2.0'
# torch.distributed default process-group timeout (torch/distributed/constants.py).
DEFAULT_PG_TIMEOUT_S = 1800
# From this torch on, our exit teardown makes what still holds the destroyed gloo group give it up (DDP wrappers;
# from ~2.4 on also torch.distributed.nn.functional's defaults, bound at an import after the init) so that it
# ends before the interpreter: on torch 1.10 ending the group's TCPStore at exit hung both ranks of a 2-process
# mmdet launch (each joining the store's watch thread; seen here, distributed/group_teardown.py).
TORCH_EXIT_RELEASES_WRAPPERS = '2.0'

# /dev/shm sizing (heuristic, not a documented number): each DataLoader worker keeps prefetch_factor=2
# batches in shared memory; a few K-Radar radar tensors per batch make ~128 MiB the floor per worker and
# 512 MiB comfortable. Docker's default /dev/shm is 64 MiB (PyTorch README: use --ipc=host or --shm-size).
SHM_PER_WORKER_MIN = 128 * 2 ** 20
SHM_PER_WORKER_OK = 512 * 2 ** 20
SHM_NO_CONFIG_MIN = 1 * 2 ** 30
# file_descriptor sharing needs one fd per shared tensor in flight; below this soft limit workers hit
# "received 0 items of ancdata" / "Too many open files".
NOFILE_MIN = 4096
