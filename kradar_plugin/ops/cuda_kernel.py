"""The numba-CUDA kernel. Imported only by ``backend_numba_cuda`` on first use, never by
``kradar_plugin.ops``: ``@cuda.jit`` without a signature compiles lazily, at the first launch."""
import math

from numba import cuda, float64

from .clamp_kernel import make_pair_intersection

THREADS_PER_BLOCK = 64
pair_intersection = make_pair_intersection(cuda.jit(device=True))


@cuda.jit
def intersections_kernel(boxes, offsets, query_boxes, out):
    """Block (i, j) covers boxes[64 i : 64 i + 64] x query_boxes[64 j : 64 j + 64]; thread t one row."""
    n = boxes.shape[0]
    k = query_boxes.shape[0]
    row0 = cuda.blockIdx.x * THREADS_PER_BLOCK
    col0 = cuda.blockIdx.y * THREADS_PER_BLOCK
    tx = cuda.threadIdx.x
    block_q = cuda.shared.array((THREADS_PER_BLOCK, 6), float64)
    cols = min(k - col0, THREADS_PER_BLOCK)
    rows = min(n - row0, THREADS_PER_BLOCK)
    if tx < cols:
        q = col0 + tx
        block_q[tx, 0] = query_boxes[q, 0]
        block_q[tx, 1] = query_boxes[q, 1]
        block_q[tx, 2] = 0.5 * query_boxes[q, 2]
        block_q[tx, 3] = 0.5 * query_boxes[q, 3]
        block_q[tx, 4] = math.cos(query_boxes[q, 4])
        block_q[tx, 5] = math.sin(query_boxes[q, 4])
    cuda.syncthreads()
    if tx < rows:
        a = row0 + tx
        off = cuda.local.array((4, 2), float64)
        for i in range(4):
            off[i, 0] = offsets[a, i, 0]
            off[i, 1] = offsets[a, i, 1]
        for j in range(cols):
            out[a, col0 + j] = pair_intersection(
                boxes[a, 0] - block_q[j, 0], boxes[a, 1] - block_q[j, 1], off,
                block_q[j, 4], block_q[j, 5], block_q[j, 2], block_q[j, 3])
