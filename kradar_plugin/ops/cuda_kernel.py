"""The numba-CUDA kernel. Imported only by ``backend_numba_cuda`` on first use and by the doctor's compile check,
never by ``kradar_plugin.ops``: ``cuda.jit`` without a signature compiles lazily, at the first launch.

The kernel calls no device function, not even ``min``/``max`` (numba >= 0.58 compiles those as device
functions too): the pair intersection is ``clamp_kernel.pair_intersection``'s body,
written out between the ``pair-intersection body`` markers (tests/ops/test_cuda_compile.py holds the two equal).
numba >= 0.58 compiles each called device function for ``get_current_device()``'s compute capability, which
needs a driver; without calls ``numba.cuda.compile_ptx`` (or numba 0.48's ``compile_kernel``) compiles it to PTX
for any architecture on a machine without a GPU, and ptxas assembles it.
"""
import math

from numba import cuda, float64

THREADS_PER_BLOCK = 64
#: the argument types the backend launches with (C-contiguous float64), for compiling ahead of a launch
SIGNATURE = 'void(float64[:, ::1], float64[:, :, ::1], float64[:, ::1], float64[:, ::1])'


def intersections(boxes, offsets, query_boxes, out):
    """Block (i, j) covers boxes[64 i : 64 i + 64] x query_boxes[64 j : 64 j + 64]; thread t one row."""
    n = boxes.shape[0]
    k = query_boxes.shape[0]
    row0 = cuda.blockIdx.x * THREADS_PER_BLOCK
    col0 = cuda.blockIdx.y * THREADS_PER_BLOCK
    tx = cuda.threadIdx.x
    block_q = cuda.shared.array((THREADS_PER_BLOCK, 6), float64)
    cols = k - col0 if k - col0 < THREADS_PER_BLOCK else THREADS_PER_BLOCK   # no min(): see above
    rows = n - row0 if n - row0 < THREADS_PER_BLOCK else THREADS_PER_BLOCK
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
        for c in range(4):
            off[c, 0] = offsets[a, c, 0]
            off[c, 1] = offsets[a, c, 1]
        for b in range(cols):
            dcx = boxes[a, 0] - block_q[b, 0]
            dcy = boxes[a, 1] - block_q[b, 1]
            cos_b = block_q[b, 4]
            sin_b = block_q[b, 5]
            hx = block_q[b, 2]
            hy = block_q[b, 3]
            # pair-intersection body: begin
            twice = 0.0
            for i in range(4):
                j = (i + 1) % 4
                xi = dcx + off[i, 0]
                yi = dcy + off[i, 1]
                xj = dcx + off[j, 0]
                yj = dcy + off[j, 1]
                # the edge (u, v) + t (du, dv) in B's frame
                u = cos_b * xi - sin_b * yi
                v = sin_b * xi + cos_b * yi
                du = cos_b * xj - sin_b * yj - u
                dv = sin_b * xj + cos_b * yj - v
                # its crossings with u = -hx, u = hx, v = -hy, v = hy inside (0, 1); 0 (a harmless repeat) otherwise
                t1 = 0.0
                t2 = 0.0
                t3 = 0.0
                t4 = 0.0
                if du != 0.0:
                    t1 = (-hx - u) / du
                    t2 = (hx - u) / du
                if dv != 0.0:
                    t3 = (-hy - v) / dv
                    t4 = (hy - v) / dv
                if not (t1 > 0.0 and t1 < 1.0):
                    t1 = 0.0
                if not (t2 > 0.0 and t2 < 1.0):
                    t2 = 0.0
                if not (t3 > 0.0 and t3 < 1.0):
                    t3 = 0.0
                if not (t4 > 0.0 and t4 < 1.0):
                    t4 = 0.0
                # 5-comparator sorting network (swaps: numba >= 0.58 compiles min/max as device functions)
                if t2 < t1:
                    t1, t2 = t2, t1
                if t4 < t3:
                    t3, t4 = t4, t3
                if t3 < t1:
                    t1, t3 = t3, t1
                if t4 < t2:
                    t2, t4 = t4, t2
                if t3 < t2:
                    t2, t3 = t3, t2
                # twice the signed shoelace area of the samples t = 0, t1..t4, 1 clamped to B (hx, hy >= 0)
                acc = 0.0
                pu = -hx if u < -hx else (hx if u > hx else u)
                pv = -hy if v < -hy else (hy if v > hy else v)
                x = u + t1 * du
                y = v + t1 * dv
                qu = -hx if x < -hx else (hx if x > hx else x)
                qv = -hy if y < -hy else (hy if y > hy else y)
                acc += pu * qv - qu * pv
                x = u + t2 * du
                y = v + t2 * dv
                pu = -hx if x < -hx else (hx if x > hx else x)
                pv = -hy if y < -hy else (hy if y > hy else y)
                acc += qu * pv - pu * qv
                x = u + t3 * du
                y = v + t3 * dv
                qu = -hx if x < -hx else (hx if x > hx else x)
                qv = -hy if y < -hy else (hy if y > hy else y)
                acc += pu * qv - qu * pv
                x = u + t4 * du
                y = v + t4 * dv
                pu = -hx if x < -hx else (hx if x > hx else x)
                pv = -hy if y < -hy else (hy if y > hy else y)
                acc += qu * pv - pu * qv
                x = u + du
                y = v + dv
                qu = -hx if x < -hx else (hx if x > hx else x)
                qv = -hy if y < -hy else (hy if y > hy else y)
                acc += pu * qv - qu * pv
                twice += acc
            area = 0.5 * abs(twice)
            # pair-intersection body: end
            out[a, col0 + b] = area


intersections_kernel = cuda.jit(intersections)
