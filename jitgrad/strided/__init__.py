"""Strided layouts over flat storages: stride arithmetic and the copy kernels."""
