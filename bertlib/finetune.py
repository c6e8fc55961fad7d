"""``python -m bertlib.finetune``: the documented command. The code is in ``bertlib.training.finetune``."""
from .training.finetune import main

if __name__ == "__main__":
    main()
