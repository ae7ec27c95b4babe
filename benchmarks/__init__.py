"""asv-style benchmarks of npuemu (``python benchmarks/run.py`` runs them without asv)."""
