"""Every cell, and the page people read: the sweep (here or on SLURM), the model, matrix.md/json and plots."""
