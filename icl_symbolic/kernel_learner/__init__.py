"""The kernel learner (our extension beyond the paper): theory, simulation and its d ladder."""
