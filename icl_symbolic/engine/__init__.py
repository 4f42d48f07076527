"""The symbolic-numeric engine: the expression language, Gaussian expectations, Hermite coefficients."""
