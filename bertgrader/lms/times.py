"""Hand-in times: where each LMS keeps them, and nbgrader's ``timestamp.txt``.

A submissions zip holds no hand-in times (Canvas's holds a late marker only; the dates of a zip's members are
local times without a zone, set by whatever wrote the zip). They come from beside it:

- Canvas: the Submissions API's JSON (``GET /api/v1/courses/:course/assignments/:assignment/submissions``,
  a list of objects with ``user_id`` and ``submitted_at``, ISO 8601 with its offset), or a CSV with a
  ``user_id`` (or ``ID``) column and a ``submitted_at`` column.
- Moodle: the grading worksheet ("Download grading worksheet"), its ``Last modified (submission)`` column,
  written in the downloading account's time zone and language ("Tuesday, 3 December 2024, 10:15 AM"),
  with no zone: the import needs ``--timezone``.

nbgrader reads ``submitted/<student>/<assignment>/timestamp.txt`` (CourseDirectory.get_existing_timestamp,
nbgrader.utils.parse_utc); its exchange writes ``%Y-%m-%d %H:%M:%S.%f %Z``, and so does this, in UTC.
"""
from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from pathlib import Path

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"  # nbgrader's Exchange.timestamp_format


class BadTimes(ValueError):
    """A times file that cannot be read as the LMS writes it; the message names the file, row and value."""


def nbgrader_timestamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime(TIMESTAMP_FORMAT)


def read_csv(path: Path) -> list[dict]:
    """Rows of a CSV an LMS wrote (UTF-8, maybe with a byte-order mark)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise BadTimes(f"{path}: cannot read it as UTF-8 text ({e})") from None
    return list(csv.DictReader(io.StringIO(text)))


def _iso(value: str, where: str) -> datetime:
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadTimes(f"{where}: {value!r} is not an ISO 8601 time (Canvas writes 2026-12-01T23:59:00Z)") from None
    if when.tzinfo is None:
        raise BadTimes(f"{where}: {value!r} has no time zone (Canvas writes UTC, ending in Z)")
    return when


def canvas_times(path: Path) -> dict[str, datetime]:
    """{Canvas user id: hand-in time} from the Submissions API's JSON or a CSV; a submission with no time
    (never submitted) is left out."""
    path = Path(path)
    times = {}
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise BadTimes(f"{path}: not the Submissions API's JSON ({e})") from None
        rows = data.get("submissions", data) if isinstance(data, dict) else data
        if not isinstance(rows, list) or not all(isinstance(r, dict) and "user_id" in r for r in rows):
            raise BadTimes(f"{path}: expected a list of submissions, each with user_id and submitted_at "
                           "(the Canvas Submissions API's answer)")
        for i, row in enumerate(rows):
            if row.get("submitted_at"):
                times[str(row["user_id"])] = _iso(str(row["submitted_at"]), f"{path}, submission {i}")
        return times
    rows = read_csv(path)
    columns = rows[0].keys() if rows else []
    id_col = next((c for c in ("user_id", "ID") if c in columns), None)
    if id_col is None or "submitted_at" not in columns:
        raise BadTimes(f"{path}: expected a CSV with a user_id (or ID) column and a submitted_at column; "
                       f"its columns are {', '.join(columns) or 'none'}")
    for i, row in enumerate(rows, start=2):
        if (row.get("submitted_at") or "").strip():
            times[row[id_col].strip()] = _iso(row["submitted_at"], f"{path}, line {i}")
    return times


MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments")


def moodle_worksheet(path: Path) -> list[dict]:
    """The grading worksheet's rows, checked for the columns this reads and writes."""
    rows = read_csv(path)
    if not rows:
        raise BadTimes(f"{path}: the grading worksheet has no rows")
    missing = [c for c in ("Identifier", "Full name", "Grade", "Maximum grade", "Last modified (submission)")
               if c not in rows[0]]
    if missing:
        raise BadTimes(f"{path}: not a Moodle grading worksheet: no column {', '.join(missing)} "
                       f"(its columns are {', '.join(rows[0])})")
    return rows


def participant(identifier: str) -> str | None:
    """'Participant 123456' -> '123456' (the worksheet's Identifier; any language's word before the number)."""
    last = identifier.strip().rsplit(" ", 1)[-1]
    return last if last.isdigit() else None


def moodle_times(path: Path, zone: str | None) -> dict[str, datetime]:
    """{participant id: hand-in time} from the worksheet's Last modified (submission), read in ``zone``."""
    from dateutil import parser, tz

    rows = moodle_worksheet(path)
    if zone is None:
        raise BadTimes(f"{path}: the worksheet's times carry no time zone: pass --timezone with the zone of the "
                       "Moodle account that downloaded it (e.g. --timezone Europe/Berlin)")
    tzinfo = tz.gettz(zone)
    if tzinfo is None:
        raise BadTimes(f"--timezone {zone!r} is not a time zone name (e.g. Europe/Berlin, UTC)")
    times = {}
    for i, row in enumerate(rows, start=2):
        pid = participant(row["Identifier"])
        value = (row.get("Last modified (submission)") or "").strip()
        if pid is None or value in ("", "-"):
            continue
        try:
            when = parser.parse(value)
        except (ValueError, OverflowError):
            raise BadTimes(f"{path}, line {i}: {value!r} is not a date this can read (download the worksheet "
                           "with Moodle's language set to English)") from None
        times[pid] = when.replace(tzinfo=tzinfo) if when.tzinfo is None else when
    return times
