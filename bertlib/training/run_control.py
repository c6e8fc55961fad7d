"""How a training run is launched and stopped: the processes ``torchrun`` starts (``distributed``), and
Ctrl-C, which stops at the end of a step so that what was trained can be saved (``StopOnCtrlC``,
``TrainingInterrupted``). Pretraining uses both.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

import torch


def distributed() -> tuple[int, int]:
    """(rank, world size) when launched by torchrun, else (0, 1)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not torch.distributed.is_initialized():
        backend = "nccl" if torch.cuda.is_available() and os.environ.get("BERTLIB_BACKEND") != "gloo" else "gloo"
        torch.distributed.init_process_group(backend)
    return (torch.distributed.get_rank(), world) if world > 1 else (0, 1)


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped pretraining between two steps: ``steps_done`` of ``steps`` were trained and, when an
    output folder was given, saved to ``saved_to``. A KeyboardInterrupt, so that whoever called ``pretrain``
    stops too."""

    def __init__(self, steps_done: int, steps: int, saved_to: str | None):
        super().__init__(f"interrupted after step {steps_done} of {steps}")
        self.steps_done, self.steps, self.saved_to = steps_done, steps, saved_to


class StopOnCtrlC:
    """Once armed (when the training loop starts), the first Ctrl-C (SIGINT) only asks the loop to stop at the
    end of the current step, so that the model is never saved half-updated; before that, and the second time,
    Ctrl-C interrupts at once, as usual.

    Only in the main thread of a single process: Python sets signal handlers nowhere else, and under DDP
    every process would have to stop at the same step (there torchrun's own handling of Ctrl-C applies)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.armed = self.requested = False
        self.then, self._previous = "", None

    def arm(self, then: str) -> None:
        """From now on the first Ctrl-C waits for the step to end; ``then`` says what happens next."""
        self.armed, self.then = True, then

    def _handle(self, signum, frame):
        if not self.armed or self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(f"\nCtrl-C: stopping at the end of this step, {self.then} (Ctrl-C again stops at once, saving "
              "nothing)", file=sys.stderr, flush=True)

    def __enter__(self):
        if self.enabled:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            # None: the handler was not set from Python; Python's own default raises KeyboardInterrupt
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)
        return False
