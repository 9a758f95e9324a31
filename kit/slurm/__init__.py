"""SLURM job arrays, as the matrix (one cell per task) and bisect (one probe per task) submit and follow them."""
