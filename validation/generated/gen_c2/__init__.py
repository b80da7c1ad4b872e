"""Generated kernels (validation/generated/gen.py, campaign c2, seed 20261207, 2000 kernels)."""
CAMPAIGN = 'c2'
BATCHES = ['batch_00', 'batch_01', 'batch_02', 'batch_03', 'batch_04', 'batch_05', 'batch_06', 'batch_07', 'batch_08', 'batch_09', 'batch_10', 'batch_11', 'batch_12', 'batch_13', 'batch_14', 'batch_15', 'batch_16', 'batch_17', 'batch_18', 'batch_19']
