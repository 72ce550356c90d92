"""Independent reference for rotated-box overlaps: shapely polygons built from the mmdet3d corner
formula written out here (not from kradar_plugin's code)."""
import math

import numpy as np
import shapely
from shapely.geometry import Polygon


def corners(box):
    x, y, w, h, a = [float(v) for v in box]
    c, s = math.cos(a), math.sin(a)
    local = [(-w / 2, -h / 2), (-w / 2, h / 2), (w / 2, h / 2), (w / 2, -h / 2)]
    return [(c * u + s * v + x, -s * u + c * v + y) for u, v in local]


def overlaps(boxes, query_boxes, criterion=-1):
    """(N, K) overlaps with mmdet3d's criterion semantics; 0 where a denominator is 0."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 5)
    query_boxes = np.asarray(query_boxes, dtype=np.float64).reshape(-1, 5)
    pa = shapely.polygons([corners(b) for b in boxes]) if len(boxes) else np.zeros(0, object)
    pb = shapely.polygons([corners(b) for b in query_boxes]) if len(query_boxes) else np.zeros(0, object)
    inter = shapely.area(shapely.intersection(pa[:, None], pb[None, :])) if pa.size and pb.size \
        else np.zeros((len(boxes), len(query_boxes)))
    area_a = boxes[:, 2] * boxes[:, 3]
    area_b = query_boxes[:, 2] * query_boxes[:, 3]
    denom = {-1: area_a[:, None] + area_b[None, :] - inter, 0: np.broadcast_to(area_b[None, :], inter.shape),
             1: np.broadcast_to(area_a[:, None], inter.shape), 2: None}[criterion]
    if denom is None:
        return inter
    return np.where(denom > 0, inter / np.where(denom > 0, denom, 1.0), 0.0)


def random_boxes(rng, n, centre=0.0, spread=6.0):
    return np.column_stack([rng.uniform(centre - spread, centre + spread, (n, 2)),
                            rng.uniform(0.2, 5.0, (n, 2)), rng.uniform(-7.0, 7.0, n)])


def polygon_area(box):
    return Polygon(corners(box)).area
