"""What the runs leave, read back: run records, the tidy results table, report tables,
figures, metric cards and the manuscript."""
