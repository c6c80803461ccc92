"""Held-out batch 4: implementations written from the papers and the kit's public documentation only (README.md)."""
