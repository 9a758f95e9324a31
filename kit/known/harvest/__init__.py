"""The harvest (issue 59): known problems taken from the regression tests JAX's own fixes added, each confirmed
by running its test at the fix and at its parent on one build (docs/known.md, "The harvest")."""
