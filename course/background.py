"""A second process for the book's long runs, so that on a two-core machine both cores work.

Chapter 11 starts experiments 1 to 4 and the MiniLM fine-tuning here before the default pretraining run:
one core pretrains while the other experiments (each run is single-threaded).
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import torch


def in_background(threads: int = 1) -> ProcessPoolExecutor:
    """A one-process pool for runs that do not need the caller's results, with ``threads`` torch threads.

    The process is started with ``spawn``: a fork of a process that has already run torch can hang in its
    thread pool. Submit importable functions (``pool.submit(nsp)``), collect with ``future.result()``.
    """
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=torch.set_num_threads, initargs=(threads,))
