"""kradar_plugin.runner."""
