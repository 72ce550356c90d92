"""numba-CUDA backend: the reference kernel's launch layout (64 threads a block, one row box per thread,
a block of 64 query boxes staged in shared memory) running the robust ``clamp_kernel`` in float64.

Nothing is compiled at import: the kernel module is imported and compiled on first use (the backend choice runs
that first use as a trial, inside ``try``), so a numba/CUDA/driver mismatch can never fail an import.
"""
import numpy as np

from .boxes import corner_offsets


def intersection_areas(boxes, query_boxes, device_id=0):
    """(N, K) float64 intersection areas on GPU ``device_id``; contract of backend_numpy's function."""
    from numba import cuda

    from .cuda_kernel import THREADS_PER_BLOCK, intersections_kernel

    out = np.zeros((len(boxes), len(query_boxes)), dtype=np.float64)
    if out.size == 0:
        return out
    cuda.select_device(device_id)
    grid = ((len(boxes) + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK,
            (len(query_boxes) + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK)
    d_out = cuda.to_device(out)
    intersections_kernel[grid, THREADS_PER_BLOCK](
        cuda.to_device(boxes), cuda.to_device(np.ascontiguousarray(corner_offsets(boxes))),
        cuda.to_device(query_boxes), d_out)
    return d_out.copy_to_host()
