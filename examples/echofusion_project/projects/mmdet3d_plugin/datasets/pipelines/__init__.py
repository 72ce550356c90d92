from .loading import LoadKRadarPointsFromBEV

__all__ = ['LoadKRadarPointsFromBEV']
