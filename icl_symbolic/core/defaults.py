"""The defaults shared by the Python API and every command (one home, stated in --help).

The model parameters follow the paper's Figs. 1-2 (Sec. 3, p. 4): label noise
rho = 0.1, alpha = kappa = 2; tau = 2 lies past the interpolation peak; d = 64 is
Fig. 1's smallest dimension.  ``RHO`` is a string so that it is read exactly
(1/10, not the binary float nearest to 0.1).
"""

RHO = "0.1"
ALPHA = 2.0
KAPPA = 2.0
TAU = 2.0
LAM = 0.0
D = 64
SEEDS = 3
N_TEST = 20000  # Monte-Carlo test prompts per seed (simulate, extrapolate; the kernel learner: 4000)
DIGITS = 30
M = 8
C_TRAIN = "identity"

__all__ = ["RHO", "ALPHA", "KAPPA", "TAU", "LAM", "D", "SEEDS", "N_TEST", "DIGITS", "M", "C_TRAIN"]
