"""Generated kernels (validation/generated/gen.py, seed 20261130, 400 kernels)."""
BATCHES = ['batch_00', 'batch_01', 'batch_02', 'batch_03', 'batch_04', 'batch_05', 'batch_06', 'batch_07']
