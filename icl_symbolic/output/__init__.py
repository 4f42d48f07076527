"""Output: files written all-or-nothing, text/HTML display, MathML, and the matplotlib figures."""
