"""What runs inside a student's kernel: the only part of bertgrader the sandbox binds (see bertgrader.sandbox)."""
