"""``nbgrader validate``, the student's check before submitting, as the course runs it (``install``).

nbgrader prints, for each failing cell, the whole test cell's source, then the traceback, every line cut or
broken at 90 characters, and the reason (the traceback's last line) last; then it exits 0, failed or not.
Here each failing cell is first named with its reason, whole and unbroken, one after the other; the
tracebacks follow, whole, without the test cells' source (a traceback already shows the lines around the one
that failed); and the command exits 1 when a cell fails (or a test cell was edited, or no file matched).
The reason also opens the error JupyterLab's Validate button shows (it calls the same ``_extract_error``).
"""
from __future__ import annotations

import functools
import re

from nbconvert.filters.ansi import strip_ansi

from bertgrader import i18n
from bertgrader.i18n import N_, tr

NO_RESPONSE = N_("You did not provide a response.")  # nbgrader's words for a written answer left blank
SUCCESS = N_("Success! Your notebook passes all the tests.")  # nbgrader's verdict line when nothing failed
_FRAME = re.compile(r"^(?:Cell In\[\d+\], line \d+|File [^\n]*?:\d+), in (\w+)", re.M)


def reason(cell) -> str:
    """Why a failing cell failed, in a line or a few (an exception's message is kept whole)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            ename, evalue = output.get("ename", "Error"), strip_ansi(str(output.get("evalue", ""))).strip()
            if ename == "NotImplementedError" and not evalue:
                frames = _FRAME.findall(strip_ansi("\n".join(output.get("traceback", []))))
                if frames:
                    return tr("NotImplementedError: not answered yet (`raise NotImplementedError()` is still in "
                              "{function}: replace it with your answer)", function=frames[-1])
                return tr("NotImplementedError: not answered yet (`raise NotImplementedError()` is still: replace it "
                          "with your answer)")
            return f"{ename}: {evalue}" if evalue else ename
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            text = strip_ansi(output.get("text", "")).strip()
            return tr("it wrote to stderr, which fails a test cell: ") + (text.splitlines()[0] if text else "")
    return ""


def part_of(nb, cell) -> str:
    """The heading of the markdown cell above ``cell`` ("Part 2: masked softmax"), and its grade id."""
    heading = ""
    for c in nb.cells:
        if c is cell:
            break
        if c.cell_type == "markdown":
            found = re.search(r"^#+\s+(.+)$", c.source, re.M)
            heading = found.group(1).strip() if found else heading
    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
    gid = (tr("test {id}", id=gid) if cell.cell_type == "code" else tr("answer {id}", id=gid)) if gid else ""
    return f"{heading}, {gid}" if heading and gid else heading or gid or tr("a cell")


@functools.cache
def install() -> None:
    from nbgrader.apps.validateapp import ValidateApp
    from nbgrader.validator import Validator

    original_failed, original_extract, original_start = (Validator._get_failed_cells, Validator._extract_error,
                                                         ValidateApp.start)
    original_num_failed = Validator._print_num_failed

    def _get_failed_cells(self, nb):
        failed = original_failed(self, nb)
        self._language = i18n.language_of(nb)  # the notebook's: its messages in the student's language
        with i18n.speaking(self._language):
            self._parts = {id(c): part_of(nb, c) for c in failed}
        return failed

    def _extract_error(self, cell) -> str:
        with i18n.speaking(getattr(self, "_language", i18n.ENGLISH)):
            return _extract_error_in(self, cell)

    def _extract_error_in(self, cell) -> str:
        error = original_extract(self, cell)
        why = reason(cell) or tr(strip_ansi(error).strip().split("\n", 1)[0])  # nbgrader's NO_RESPONSE, translated
        where = getattr(self, "_parts", {}).get(id(cell))
        head = f"{where}: {why}" if where and why else why or where
        text = f"{head}\n\n{strip_ansi(error)}" if head else strip_ansi(error)
        self._split = {**getattr(self, "_split", {}), text: (head, strip_ansi(error))}
        return text

    def _indent(self, val: str) -> str:  # whole lines: never cut ("...") nor broken mid-word
        return "\n".join(self.indent + strip_ansi(line) if line else "" for line in val.split("\n"))

    def validate_and_print(self, filename: str) -> None:
        results = self.validate(filename)
        verdict_failed = bool(results.get("type_changed") or results.get("changed")
                              or results.get("passed" if self.invert else "failed"))
        if verdict_failed and isinstance(self.parent, ValidateApp):
            self.parent.bertgrader_failed = True
        if results.get("type_changed") or results.get("changed") or self.invert or not results.get("failed"):
            self.validate = lambda _: results  # nbgrader's own printing: a changed cell, --invert, success
            try:
                original_print(self, filename)
            finally:
                del self.validate
            return
        failed = results["failed"]
        n = len(failed)
        with i18n.speaking(getattr(self, "_language", i18n.ENGLISH)):
            self.stream.write(tr("VALIDATION FAILED ON {n} CELL(S)! If you submit your notebook as it is, you will "
                                 "not get full credit. The cell that failed, and why:", n=n) if n == 1 else
                              tr("VALIDATION FAILED ON {n} CELL(S)! If you submit your notebook as it is, you will "
                                 "not get full credit. Each cell that failed, and why:", n=n))
            self.stream.write("\n\n")
        split = getattr(self, "_split", {})
        heads, details = zip(*(split.get(cell["raw_error"], (cell["raw_error"], "")) for cell in failed))
        for i, head in enumerate(heads, 1):
            self.stream.write(f"{i}. {head}\n\n")
        for i, (head, detail) in enumerate(zip(heads, details), 1):
            if detail.strip() and detail.strip() not in head:  # a traceback, not the reason again
                self.stream.write("=" * self.width + f"\n{i}. {head.splitlines()[0]}\n\n{self._indent(detail)}\n\n")

    original_print = Validator.validate_and_print

    def _print_num_failed(self, num_failed: int) -> None:  # nbgrader's success line, in the notebook's language
        if num_failed:
            return original_num_failed(self, num_failed)
        self.stream.write(tr(SUCCESS, getattr(self, "_language", i18n.ENGLISH)) + "\n")

    def start(self) -> None:
        import glob

        missing = [x for x in self.extra_args if not glob.glob(x)]
        if missing:
            self.fail(f"No notebook matches {', '.join(missing)}")
        self.bertgrader_failed = False
        original_start(self)
        if self.bertgrader_failed:
            self.exit(1)

    Validator._get_failed_cells = _get_failed_cells
    Validator._extract_error = _extract_error
    Validator._indent = _indent
    Validator.validate_and_print = validate_and_print
    Validator._print_num_failed = _print_num_failed
    ValidateApp.start = start
