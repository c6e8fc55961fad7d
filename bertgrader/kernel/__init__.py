"""What runs inside a student's kernel: the only part of bertgrader the sandbox binds (see bertgrader.sandbox)."""

# How the grader and the kernel (kernel_side) tell their own messages apart, here so that the grader's side can
# name them without importing kernel_side, and through it torch (2 s of CPU in every nbgrader command).
MIME = "application/x-bert-grader"  # the display output that carries an answer of kernel_side's
REQUEST_KEY = "bertgrader.request"  # where a request travels in the execute_request's metadata
