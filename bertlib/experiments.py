"""``python -m bertlib.experiments``: the documented command. The code is in ``bertlib.training.experiments``."""
from .training.experiments import main

if __name__ == "__main__":
    main()
