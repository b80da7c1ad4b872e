"""Reading the campaign data files: JSON stored gzip- or xz-compressed (by the file's extension).
Large PTX and SASS sets are stored as .json.xz (about a third of gzip's size for PTX text; the
device tool carries at most 64 MiB of tracked files)."""
import gzip
import json
import lzma


def open_text(path):
    """A text reader for PATH: .xz and .gz decompressed, anything else as is."""
    if path.endswith(".xz"):
        return lzma.open(path, "rt")
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def load_json(path):
    with open_text(path) as f:
        return json.load(f)
