"""``python -m projects.pretraining_experiments NAME``: one of chapter 12's experiments (``experiments.main``)."""
from .experiments import main

if __name__ == "__main__":
    main()
