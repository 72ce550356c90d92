"""Named degenerate and ordinary cases: (boxes, query_boxes). Expected values come from shapely."""
import math

import numpy as np

PI = math.pi

CASES = {
    'identical_rotated': ([[1, 1, 1, 1, 0.3]], [[1, 1, 1, 1, 0.3]]),
    'identical_many_angles': ([[2.5, -1.0, 4.0, 1.8, a] for a in np.linspace(-3.2, 3.2, 17)],
                              [[2.5, -1.0, 4.0, 1.8, a] for a in np.linspace(-3.2, 3.2, 17)]),
    'same_box_quarter_turn': ([[0, 0, 4, 2, PI / 2]], [[0, 0, 2, 4, 0]]),
    'shared_edge': ([[0, 0, 2, 2, 0]], [[2, 0, 2, 2, 0]]),
    'collinear_edges_overlapping': ([[0, 0, 2, 2, 0]], [[1, 0, 2, 2, 0]]),
    'collinear_edges_rotated': ([[0, 0, 2, 2, 0.7]], [[math.cos(0.7), -math.sin(0.7), 2, 2, 0.7]]),
    'inside': ([[0, 0, 4, 4, 0.2]], [[0.3, -0.2, 1, 1.5, 1.1]]),
    'inside_reversed': ([[0.3, -0.2, 1, 1.5, 1.1]], [[0, 0, 4, 4, 0.2]]),
    'touching_corners': ([[0, 0, 2, 2, 0]], [[2, 2, 2, 2, 0]]),
    'touching_corner_rotated': ([[0, 0, 2, 2, 0]], [[1 + math.sqrt(2), 0, 2, 2, PI / 4]]),
    'disjoint': ([[0, 0, 1, 1, 0.5]], [[10, 10, 1, 1, 0.5]]),
    'zero_width': ([[0, 0, 0, 2, 0.3]], [[0, 0, 2, 2, 0.3]]),
    'zero_height_both': ([[0, 0, 2, 0, 0]], [[0, 0, 2, 0, 0]]),
    'zero_size_point': ([[0, 0, 0, 0, 0]], [[0, 0, 1, 1, 0]]),
    'far_from_origin': ([[1e4, -1e4, 4.2, 1.9, 0.4]], [[1e4 + 0.5, -1e4 + 0.3, 4.0, 2.0, 0.45]]),
    'far_identical': ([[9999.37, 10000.11, 4.2, 1.9, 1.2]], [[9999.37, 10000.11, 4.2, 1.9, 1.2]]),
    'angles_beyond_2pi': ([[0, 0, 3, 1, 0.4 + 4 * PI], [0, 0, 3, 1, -0.4 - 6 * PI]],
                          [[0.2, 0.1, 3, 1, 0.4], [0, 0, 2, 2, -9.0]]),
    'cross': ([[0, 0, 6, 1, 0]], [[0, 0, 1, 6, 0]]),
    'octagon': ([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, PI / 4]]),
}


def as_arrays(name):
    boxes, query = CASES[name]
    return np.asarray(boxes, dtype=np.float64), np.asarray(query, dtype=np.float64)
