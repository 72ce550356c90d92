"""The project's plugin package (imported by ``custom_imports`` or ``plugin=True``): dataset, pipelines."""
from .datasets import KRadarDataset  # noqa: F401
from .datasets.pipelines import LoadKRadarPointsFromBEV  # noqa: F401
