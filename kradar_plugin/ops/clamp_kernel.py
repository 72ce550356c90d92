"""Scalar clamp-clipping kernel shared by the numba-CPU and numba-CUDA backends.

Plain Python on scalars and a small array, no numba import: ``make_pair_intersection(jit)`` compiles it with
``numba.njit`` (``backend_numba_cpu``). The method is the one of ``backend_numpy`` (see its docstring). Each edge
of box A contributes independently: its samples are t = 0, its sorted crossings with the lines u = ±hx, v = ±hy,
and t = 1, mapped through the clamp.

The body is one function that calls nothing but ``abs`` (not even ``min``/``max``): ``cuda_kernel`` carries the same
lines (between the ``pair-intersection body`` markers; tests/ops/test_cuda_compile.py holds them equal) inside
its kernel, because numba >= 0.58 compiles every called CUDA device function for the current device's compute
capability, which needs a driver; a kernel without calls compiles to PTX on a machine without a GPU.
"""


def pair_intersection(dcx, dcy, off, cos_b, sin_b, hx, hy):
    """Area of A ∩ B. (dcx, dcy): A's centre minus B's centre; off: A's (4, 2) corner offsets
    (counter-clockwise); cos_b, sin_b: of B's angle; hx, hy: B's half sizes."""
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
    return area


def make_pair_intersection(jit):
    """``pair_intersection`` compiled with ``jit`` (e.g. ``numba.njit(cache=True)``)."""
    return jit(pair_intersection)
