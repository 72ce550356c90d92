#!/usr/bin/env bash
# Launch tools/train.py on a Slurm cluster, one task per GPU, in the shape of mmdet's slurm_train.sh:
#   tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [train.py flags]
#   GPUS=16 GPUS_PER_NODE=8 tools/slurm_train.sh gpu kradar CONFIG work_dirs/x --eval-only --checkpoints 'work_dirs/x/epoch_*.pth'
#   tools/slurm_train.sh gpu kradar CONFIG work_dirs/x --eval-first
# Environment: GPUS (tasks in all, default 8), GPUS_PER_NODE (default 8), CPUS_PER_TASK (default 5),
# SRUN_ARGS (extra srun options), PORT (the rendezvous port, the same for every task; default: 20000 + the
# job id modulo 10000 inside an allocation, else 29500), PYTHON (default python).
# Every task runs `train.py --launcher slurm`: rank, world size and master address come from SLURM_PROCID,
# SLURM_NTASKS, SLURM_LOCALID and the first host of SLURM_NODELIST (kradar_plugin also passes the config's
# dist_params.timeout, which mmcv's own Slurm start drops). --kill-on-bad-exit=1: when one task dies (a
# fail-fast exit, the OOM killer), srun ends the others instead of leaving them in a collective.
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 PARTITION JOB_NAME CONFIG WORK_DIR [train.py options]" >&2
    exit 2
fi
PARTITION=$1
JOB_NAME=$2
CONFIG=$3
WORK_DIR=$4
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-}
PYTHON=${PYTHON:-python}
if [ -n "${PORT:-}" ]; then
    MASTER_PORT=$PORT
elif [ -n "${SLURM_JOB_ID:-}" ]; then
    MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))
else
    MASTER_PORT=29500
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

# this repository and the working directory on the path, as tools/dist_train.sh
export MASTER_PORT
export PYTHONPATH="$ROOT:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
# shellcheck disable=SC2086
exec srun -p "$PARTITION" \
    --job-name="$JOB_NAME" \
    --gres=gpu:"$GPUS_PER_NODE" \
    --ntasks="$GPUS" \
    --ntasks-per-node="$GPUS_PER_NODE" \
    --cpus-per-task="$CPUS_PER_TASK" \
    --kill-on-bad-exit=1 \
    $SRUN_ARGS \
    "$PYTHON" -u "$ROOT/tools/train.py" "$CONFIG" --work-dir="$WORK_DIR" --launcher=slurm "${@:5}"
