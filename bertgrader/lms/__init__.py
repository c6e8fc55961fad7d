"""An LMS in and out: Canvas's or Moodle's submissions zip into nbgrader's submitted/ (with hand-in times),
and grades and feedback pages back in the files each LMS imports. ``python -m bertgrader.lms --help``;
docs/class-grading.md says how a term runs with it."""
