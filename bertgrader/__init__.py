"""Trusted grading: student kernels in a sandbox, grades computed where student code cannot reach.

- ``sandbox``      the bubblewrap command line for one kernel (no network, read-only view, limits)
- ``kernel``       a jupyter_client kernel manager that starts kernels in that sandbox (ipc transport)
- ``wire``         the data-only format between the grader and the kernel (safetensors + JSON)
- ``kernel_side``  what runs in the kernel: one call on the grader's behalf, result sent back as data
- ``remote``       the grader's proxy for the student's notebook (``student.my_function(...)``)
- ``checks``       helpers the hidden tests are written with, and the runner that loads them
- ``switch_off``   a copy of bertlib with the functions an assignment asks for replaced by stubs
- ``preprocessors`` nbgrader's side: ``TrustedExecute`` (autograde) and ``SafeFeedback`` (feedback)
- ``notebook``     what a graded notebook's setup cell imports (warnings to stdout, bertlib_unavailable)
"""
