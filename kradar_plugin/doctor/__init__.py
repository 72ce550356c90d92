"""kradar_plugin.doctor."""
