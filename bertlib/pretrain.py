"""``python -m bertlib.pretrain``: the documented command. The code is in ``bertlib.training.pretrain``."""
from .training.pretrain import main

if __name__ == "__main__":
    main()
