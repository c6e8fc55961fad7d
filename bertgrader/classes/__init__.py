"""The class runner: ``python -m bertgrader <assignment|all> --workers N`` grades a whole class in parallel."""
