from .kradar_dataset import KRadarDataset

__all__ = ['KRadarDataset']
