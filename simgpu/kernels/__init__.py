"""The kernel library: classic numba.cuda kernels, written once and used by the demo, the tests,
the benchmarks and the examples.  Each module's kernels run unchanged under numba.cuda."""
