#!/usr/bin/env bash
# Launch tools/train.py on GPUS processes of this machine with torchrun (python -m torch.distributed.run).
#   tools/dist_train.sh CONFIG GPUS [train.py flags: --eval-only --eval-first --eval-samples N --cfg-options ...]
# Without CUDA the processes use the gloo backend on the CPU.
# PORT: rendezvous port (default: a free port, so that several jobs can run side by side; multi-node jobs
# must set it). NNODES, NODE_RANK, MASTER_ADDR: multi-node settings. PYTHON: the interpreter (default python).
# RANK_PREFIX=1: prefix every output line with its process ([default0]:, [default1]:, ...) through torchrun's
# --tee 3 (torch 2.0 has no TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE); failures are rank-tagged in any case.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 CONFIG GPUS [train.py options]" >&2
    exit 2
fi
CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
PYTHON=${PYTHON:-python}
if [ -z "${PORT:-}" ]; then
    if [ "$NNODES" != 1 ]; then
        echo "$0: set PORT (the same on every node) for a multi-node job" >&2
        exit 2
    fi
    PORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LAUNCH_EXTRA=()
if [ "${RANK_PREFIX:-0}" = 1 ]; then
    LAUNCH_EXTRA=(--tee 3)
fi

# this repository and the working directory on the path: a project's custom_imports (e.g.
# 'projects.mmdet3d_plugin') must import when the config loads, as with mmdet3d's own dist_train.sh
PYTHONPATH="$ROOT:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
exec "$PYTHON" -m torch.distributed.run \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --master_addr="$MASTER_ADDR" \
    --nproc_per_node="$GPUS" \
    --master_port="$PORT" \
    --monitor_interval=1 \
    ${LAUNCH_EXTRA[@]+"${LAUNCH_EXTRA[@]}"} \
    "$ROOT/tools/train.py" \
    "$CONFIG" \
    --launcher pytorch "${@:3}"
