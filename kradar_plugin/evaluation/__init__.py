"""kradar_plugin.evaluation."""
