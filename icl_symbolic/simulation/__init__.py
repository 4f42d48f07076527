"""Finite-size simulation of the trained linear attention: solvers, training, the per-seed cache."""
