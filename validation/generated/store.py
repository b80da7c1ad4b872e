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


# Many small arrays (a campaign's outputs: 12,900 of them) cost npz a zip entry each (about 1.5 MB
# of headers for c2); packed, they are one byte blob and an index, in the same .npz file.
_INDEX = "__packed_index__"


def save_arrays_packed(path, arrays):
    """np.savez_compressed of {name: array} as one uint8 blob + a JSON index (name, dtype, shape,
    offset); load_arrays reads it back, or a plain .npz."""
    import numpy as np
    index, parts, off = [], [], 0
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        b = a.view(np.uint8).reshape(-1) if a.size else np.zeros(0, np.uint8)
        index.append([name, a.dtype.str, list(a.shape), off, int(b.size)])
        parts.append(b)
        off += b.size
    blob = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    np.savez_compressed(path, blob=blob, **{_INDEX: np.frombuffer(json.dumps(index).encode(), np.uint8)})


def load_arrays(path):
    """{name: array} of an .npz, packed (save_arrays_packed) or plain."""
    import numpy as np
    with np.load(path) as z:
        if _INDEX not in z.files:
            return {k: z[k] for k in z.files}
        index, blob = json.loads(z[_INDEX].tobytes().decode()), z["blob"]
    return {name: blob[off:off + n].view(np.dtype(dt)).reshape(shape)
            for name, dt, shape, off, n in index}
