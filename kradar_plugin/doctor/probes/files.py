"""Reading a small text file that may be missing or unreadable (/proc, version files, package sources)."""
import io


def read_text(path):
    """The file's text (undecodable bytes replaced), None when it cannot be read."""
    try:
        with io.open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except (OSError, IOError):
        return None
