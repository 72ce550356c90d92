"""The project's plugin package (imported by ``custom_imports`` or ``plugin=True``): dataset, pipelines,
the NMS-free head."""
from .datasets import KRadarDataset  # noqa: F401
from .datasets.pipelines import LoadKRadarPointsFromBEV  # noqa: F401
from .models import NMSFreeAnchor3DHead  # noqa: F401
