"""bertgrader: trusted nbgrader grading. Student kernels run in a sandbox; grades are computed where
student code cannot reach. It imports nothing from the book (course/): only bertlib, as the hidden tests' oracle.

The kernel side, the only part the sandbox shows a student's kernel (``bertgrader/kernel/``):
- ``kernel.notebook``     what a graded notebook's setup cell imports (warnings to stdout, bertlib_unavailable)
- ``kernel.kernel_side``  one call on the grader's behalf, its result sent back as data
- ``kernel.watch``        what that call did besides returning (arguments, modules, random state), measured
- ``kernel.wire``         the data-only format between the grader and the kernel (safetensors + JSON)
- ``kernel.lifeline``     starts the kernel so that it exits when its grader is gone

The grader's side (nbgrader's process):
- ``config``         what nbgrader_config.py calls after its settings (checks, autograde's refusal and registering)
- ``sandbox``        the bubblewrap command line for one kernel (no network, read-only view, limits)
- ``cgroup``         one kernel, one budget: a cgroup per kernel (memory, processes, CPU), or why there is none
- ``kernel_manager`` a jupyter_client kernel manager that starts kernels in that sandbox (ipc transport)
- ``remote``         the grader's proxy for the student's notebook (``student.my_function(...)``)
- ``effects``        the rules every call is held to besides its result, judged from kernel.watch's report
- ``checks``         helpers the hidden tests are written with, and the runner that loads them
- ``switch_off``     a copy of bertlib with the functions an assignment asks for replaced by stubs
- ``preprocessors``  nbgrader's side: ``TrustedExecute`` (autograde) and ``SafeFeedback`` (feedback)
- ``feedback``       the feedback pages' HTML exporter: formulas typeset offline, nothing from the network
- ``trial``          a throw-away copy of a course graded by real nbgrader (the grading tests and benchmarks)

The class runner, ``python -m bertgrader <assignment|all> --workers N`` (``bertgrader/classes/``):
- ``classes.run``          the command: plan, workers, progress, report
- ``classes.pool``         the worker processes
- ``classes.nbgrader_run`` nbgrader's autograde inside one worker
- ``classes.db``           the ledger of graded submissions in the gradebook's database
"""
