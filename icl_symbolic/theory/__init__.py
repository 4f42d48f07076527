"""The asymptotic theory: the linear recipe, Stieltjes transform, Result 1, Eq. (10)/(11), Appendix C."""
