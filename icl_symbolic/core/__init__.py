"""Foundations: the Value result type, error propagation, seed statistics, symbols, costs, errors, defaults."""
