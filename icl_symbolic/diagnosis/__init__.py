"""Diagnosis: the catalogue of error models (slips), curve fits, scale search, planted recall."""
