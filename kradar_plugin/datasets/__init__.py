"""kradar_plugin.datasets."""
