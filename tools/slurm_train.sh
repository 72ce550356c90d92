#!/usr/bin/env bash
# Launch tools/train.py on a Slurm cluster, one task per GPU, in the shape of mmdet's slurm_train.sh:
#   tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [train.py flags]
#   GPUS=16 GPUS_PER_NODE=8 tools/slurm_train.sh gpu kradar CONFIG work_dirs/x --eval-only --checkpoints 'work_dirs/x/epoch_*.pth'
#   tools/slurm_train.sh gpu kradar CONFIG work_dirs/x --eval-first
# Environment: GPUS (tasks in all, default 8), GPUS_PER_NODE (default 8), CPUS_PER_TASK (default 5),
# SRUN_ARGS (extra srun options), PORT (the rendezvous port, the same for every task; default: each task derives
# it from SLURM_JOB_ID, 20000 + the job id modulo 10000, below Linux's ephemeral ports, so that two jobs on the
# same nodes do not collide; an inherited MASTER_PORT is dropped), PYTHON (default python).
# Every task runs `train.py --launcher slurm`: rank, world size and master address come from SLURM_PROCID,
# SLURM_NTASKS, SLURM_LOCALID and the first host of SLURM_NODELIST (kradar_plugin also passes the config's
# dist_params.timeout, which mmcv's own Slurm start drops). --kill-on-bad-exit=1: when one task dies (a
# fail-fast exit, the OOM killer), srun ends the others instead of leaving them in a collective.
# Outside an allocation the request is first checked with `srun --test-only`: a shape the partition's nodes
# cannot give (GPUS_PER_NODE above a node's gres, more nodes than the partition has) is refused at once with
# Slurm's own reason and the nodes' gres.
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
    export MASTER_PORT=$PORT
else
    unset MASTER_PORT   # the tasks derive it from their job id (kradar_plugin's Slurm init)
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHAPE=(-p "$PARTITION" --gres=gpu:"$GPUS_PER_NODE" --ntasks="$GPUS" --ntasks-per-node="$GPUS_PER_NODE"
       --cpus-per-task="$CPUS_PER_TASK")

# shellcheck disable=SC2086
if [ -z "${SLURM_JOB_ID:-}" ] && ! refusal=$(srun --test-only "${SHAPE[@]}" $SRUN_ARGS true 2>&1); then
    nodes=$(sinfo -h -p "$PARTITION" -o '%D node(s) with gres %G and %c CPUs' 2>/dev/null | paste -sd ';' || true)
    echo "$0: Slurm refuses GPUS=$GPUS GPUS_PER_NODE=$GPUS_PER_NODE CPUS_PER_TASK=$CPUS_PER_TASK in partition" \
         "$PARTITION: $(echo "$refusal" | paste -sd ' ') (partition $PARTITION: ${nodes:-unknown}); GPUS_PER_NODE must be at" \
         "most the GPUs of a node's gres, GPUS / GPUS_PER_NODE at most its nodes" >&2
    exit 2
fi

# this repository and the working directory on the path, as tools/dist_train.sh
export PYTHONPATH="$ROOT:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
# shellcheck disable=SC2086
exec srun "${SHAPE[@]}" \
    --job-name="$JOB_NAME" \
    --kill-on-bad-exit=1 \
    $SRUN_ARGS \
    "$PYTHON" -u "$ROOT/tools/train.py" "$CONFIG" --work-dir="$WORK_DIR" --launcher=slurm "${@:5}"
