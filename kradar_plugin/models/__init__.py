"""kradar_plugin.models: tiny demo detectors (mmdet registry)."""
