"""The vectorised SIMT executor of the IR: lanes as numpy arrays, masks, reconvergence, observers."""
