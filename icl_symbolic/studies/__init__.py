"""Studies built on simulation and theory: d -> infinity ladders and the paper's figures."""
