"""The benchmark: `.venv/bin/python bench/run.py` (see bench/run.py)."""
