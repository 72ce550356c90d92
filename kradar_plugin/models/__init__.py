"""kradar_plugin.models: tiny demo detectors (mmdet registry).

Imported by ``kradar_plugin`` only when mmdet is importable; registers ``TinyRadarPeakDetector`` in mmdet's
``DETECTORS``.
"""
from .tiny_radar import TinyRadarPeakDetector

__all__ = ['TinyRadarPeakDetector']
