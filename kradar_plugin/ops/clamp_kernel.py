"""Scalar clamp-clipping kernel shared by the numba-CPU and numba-CUDA backends.

Plain Python on scalars and small arrays, no numba import: ``make_pair_intersection(jit)`` compiles them with
``numba.njit`` (``backend_numba_cpu``) or ``cuda.jit(device=True)`` (``backend_numba_cuda``). The method is the one of
``backend_numpy`` (see its docstring). Each edge of box A contributes independently: its samples are
t = 0, its sorted crossings with the lines u = ±hx, v = ±hy, and t = 1, mapped through the clamp.
"""


def make_pair_intersection(jit):
    """Return ``pair_intersection`` and its helpers compiled with ``jit``."""
    @jit
    def crossing(line, p, dp):
        """Edge parameter in (0, 1) where p + t*dp meets ``line``; 0 (a harmless repeat) otherwise."""
        if dp == 0.0:
            return 0.0
        t = (line - p) / dp
        if t > 0.0 and t < 1.0:
            return t
        return 0.0


    @jit
    def clamp(x, lo, hi):
        return min(max(x, lo), hi)


    @jit
    def edge_twice_area(u, v, du, dv, hx, hy):
        """Twice the signed shoelace contribution of one edge of A (start (u, v), direction (du, dv), in B's
        frame) after clamping to B = [-hx, hx] x [-hy, hy]."""
        t1 = crossing(-hx, u, du)
        t2 = crossing(hx, u, du)
        t3 = crossing(-hy, v, dv)
        t4 = crossing(hy, v, dv)
        # 5-comparator sorting network.
        t1, t2 = min(t1, t2), max(t1, t2)
        t3, t4 = min(t3, t4), max(t3, t4)
        t1, t3 = min(t1, t3), max(t1, t3)
        t2, t4 = min(t2, t4), max(t2, t4)
        t2, t3 = min(t2, t3), max(t2, t3)
        pu = clamp(u, -hx, hx)
        pv = clamp(v, -hy, hy)
        acc = 0.0
        qu = clamp(u + t1 * du, -hx, hx)
        qv = clamp(v + t1 * dv, -hy, hy)
        acc += pu * qv - qu * pv
        pu = clamp(u + t2 * du, -hx, hx)
        pv = clamp(v + t2 * dv, -hy, hy)
        acc += qu * pv - pu * qv
        qu = clamp(u + t3 * du, -hx, hx)
        qv = clamp(v + t3 * dv, -hy, hy)
        acc += pu * qv - qu * pv
        pu = clamp(u + t4 * du, -hx, hx)
        pv = clamp(v + t4 * dv, -hy, hy)
        acc += qu * pv - pu * qv
        qu = clamp(u + du, -hx, hx)
        qv = clamp(v + dv, -hy, hy)
        acc += pu * qv - qu * pv
        return acc


    @jit
    def pair_intersection(dcx, dcy, off, cos_b, sin_b, hx, hy):
        """Area of A ∩ B. (dcx, dcy): A's centre minus B's centre; off: A's (4, 2) corner offsets
        (counter-clockwise); cos_b, sin_b: of B's angle; hx, hy: B's half sizes."""
        twice = 0.0
        for i in range(4):
            j = (i + 1) % 4
            xi = dcx + off[i, 0]
            yi = dcy + off[i, 1]
            xj = dcx + off[j, 0]
            yj = dcy + off[j, 1]
            u = cos_b * xi - sin_b * yi
            v = sin_b * xi + cos_b * yi
            du = cos_b * xj - sin_b * yj - u
            dv = sin_b * xj + cos_b * yj - v
            twice += edge_twice_area(u, v, du, dv, hx, hy)
        return 0.5 * abs(twice)

    return pair_intersection
