"""kradar_plugin.compat."""
