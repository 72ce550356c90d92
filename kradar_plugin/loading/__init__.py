"""kradar_plugin.loading: files a user names (pickles, npz, JSON, text) may come from others. One policy:
a validated rebuild of plain data (no code run), size and count limits, and loading in a child process
whose memory and time are bounded."""
