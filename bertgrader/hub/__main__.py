"""``python -m bertgrader.hub start --students alice,bob,carol --instructor teacher``: the course server, one command.

start   checks the machine (before any change), then on first use creates the accounts, the instructor's course
        folder and nbgrader's exchange, and runs JupyterHub on 127.0.0.1 until Ctrl-C; run again with the same
        people it starts the same class again (accounts, passwords and work kept)
remove  deletes what start made: the accounts with their homes, the exchange's course folder, the state folder
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bertgrader.hub import accounts, course, environment, preflight, server
from bertgrader.i18n import ENGLISH, LANGUAGES

REPO = Path(__file__).resolve().parents[2]
STATE = Path("/srv/bert-course-hub")
EXCHANGE = Path("/srv/nbgrader/exchange")
ENV_VIEW = Path("/srv/bert-course-env")


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _languages(text: str) -> dict[str, str]:
    """``bob=zh_CN,carol=zh_CN`` -> {"bob": "zh_CN", "carol": "zh_CN"}"""
    pairs = {}
    for item in _names(text):
        name, eq, language = item.partition("=")
        if not eq or language.strip() not in (ENGLISH, *LANGUAGES):
            raise argparse.ArgumentTypeError(f"{item!r}: expected student=language, the language one of "
                                             f"{', '.join((ENGLISH, *LANGUAGES))}")
        pairs[name.strip()] = language.strip()
    return pairs


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bertgrader.hub", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start", help="set up the class (first time) and run JupyterHub until Ctrl-C")
    s.add_argument("--students", type=_names, required=True, help="comma-separated account names, e.g. alice,bob")
    s.add_argument("--instructor", required=True, help="the instructor's account name")
    s.add_argument("--languages", type=_languages, default=None,
                   help=f"the students who work in another language than English, e.g. bob=zh_CN,carol=zh_CN: "
                        f"each fetches every notebook in that language (languages: {', '.join(LANGUAGES)}); run "
                        "start again with other languages to change them (a notebook fetched already stays)")
    s.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1 (default 8000; +1 is used too)")
    s.add_argument("--assignments", type=_names, default=None,
                   help="comma-separated assignments to copy into the course folder (default: all)")
    s.add_argument("--late-penalty", choices=["zero", "none"], default="zero",
                   help="nbgrader's penalty for work handed in after the due date: zero (the default) scores it "
                        "0, none keeps its score (late work is flagged either way)")
    s.add_argument("--state", type=Path, default=STATE, help=f"the server's own files (default {STATE})")
    s.add_argument("--exchange", type=Path, default=EXCHANGE, help=f"nbgrader's exchange (default {EXCHANGE})")
    s.add_argument("--env", type=Path, default=ENV_VIEW,
                   help=f"where to build a view of the course's environment when students cannot run its Python "
                        f"(default {ENV_VIEW}; see bertgrader/hub/environment.py)")
    r = sub.add_parser("remove", help="delete the accounts, the exchange's course folder and the state folder")
    r.add_argument("--state", type=Path, default=STATE)
    return p.parse_args(argv)


def load(state: Path) -> dict | None:
    f = state / "settings.json"
    return json.loads(f.read_text(encoding="utf-8")) if f.exists() else None


def set_up(a: argparse.Namespace, view_python: Path | None) -> dict:
    """Everything start makes on first use; returns the settings the hub's configuration reads."""
    t0 = time.monotonic()
    a.state.mkdir(mode=0o700, parents=True)
    settings = {"students": a.students, "instructor": a.instructor, "port": a.port, "venv": str(preflight.VENV),
                "state": str(a.state), "proxy": preflight.proxy_command(), "exchange": str(a.exchange),
                "late_penalty": a.late_penalty, "languages": a.languages or {}, "accounts": []}
    if view_python is not None:
        environment.build_view(preflight.VENV, view_python, a.env)
        settings.update(venv=str(a.env), env_view=str(a.env))
        print(f"students cannot run the course's Python: built a view of .venv on a copy of {view_python} at {a.env}")
    protected = course.protect_checkout(REPO)
    if protected:
        print("made readable by their owner only (students use this checkout's .venv):",
              ", ".join(str(p.relative_to(REPO)) for p in protected))
    passwords = {}
    for name in a.students + [a.instructor]:
        passwords[name] = accounts.new_password()
        accounts.create(name, passwords[name])
        settings["accounts"].append(name)
        _save(a.state, settings)  # remove can undo a half-done set-up
    (a.state / "passwords.txt").touch(mode=0o600)
    (a.state / "passwords.txt").write_text("".join(f"{n}:{p}\n" for n, p in passwords.items()), encoding="utf-8")
    root = course.make_course(REPO, a.instructor, a.assignments)
    settings["course_root"] = str(root)
    course.make_exchange(a.exchange, a.instructor)
    settings["exchange_course"] = str(a.exchange / course.COURSE_ID)
    student_settings(settings)
    instructor_settings(settings)
    _save(a.state, settings)
    print(f"set up {len(a.students)} students and 1 instructor in {time.monotonic() - t0:.1f} s")
    return settings


def student_settings(settings: dict) -> None:
    """Each student's ~/.jupyter: the exchange, and the language they fetch notebooks in."""
    for name in settings["students"]:
        accounts.jupyter_settings(name, course_id=course.COURSE_ID, exchange=Path(settings["exchange"]),
                                  course_root=None, language=settings.get("languages", {}).get(name))


def instructor_settings(settings: dict) -> None:
    """The instructor's ~/.jupyter: the course folder, the late-work policy, a release in every language."""
    accounts.jupyter_settings(settings["instructor"], course_id=course.COURSE_ID, exchange=Path(settings["exchange"]),
                              course_root=Path(settings["course_root"]), late_penalty=settings["late_penalty"])


def _save(state: Path, settings: dict) -> None:
    (state / "settings.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def guide(s: dict, url: str) -> str:
    root, st = s["course_root"], s["state"]
    return f"""
The course server is up: {url}   (passwords: {st}/passwords.txt, one `name:password` a line; Ctrl-C stops it)

Instructor ({s['instructor']}): log in, then Formgrader in a tab of its own (JupyterHub forbids the frame JupyterLab
  would show it in): {url}/user/{s['instructor']}/formgrader, Manage Assignments, on the assignment's row:
  Generate (a mortarboard)      the student version, made from solutions/ (nbgrader's source folder) into
                                exercises/ and the gradebook
  Edit (a pencil)               the due date and its time zone as a UTC offset (+0000), Save: late work is flagged
  Release (a cloud, arrow up)   students see it in their Assignments pane
  Collect (a cloud, arrow down) hand-ins from the exchange, each with its hand-in time
  # Submissions (the number)    Manage Submissions: each one's Autograde (a lightning bolt), in the sandbox
                                (late penalty: {s['late_penalty']})
  Manual Grading (its menu)     written answers scored, scores adjusted, comments
  Generate Feedback (a speech bubble), then Release Feedback (an envelope): students fetch their own page
  Grades (Formgrader has no export): a Terminal in JupyterLab, cd {root}, nbgrader export --to grades.csv
  Each button is a command too, in that Terminal: nbgrader generate_assignment 01_positioning --force,
  nbgrader db assignment add 01_positioning --duedate="2030-01-31 23:59 UTC", nbgrader release_assignment,
  collect, autograde, generate_feedback --force, release_feedback (docs/course-server.md)
Each student ({', '.join(s['students'])}): log in, Nbgrader menu > Assignment List: Fetch, open the notebook from
  the Downloaded list, work, Validate, Submit (as often as needed: the last hand-in counts); once feedback is
  released, Fetch Feedback and open it from the Submitted list.
{_languages_said(s)}"""


def _languages_said(s: dict) -> str:
    chosen = s.get("languages") or {}
    if not any(lang != ENGLISH for lang in chosen.values()):
        return ""
    who = ", ".join(f"{n} ({lang})" for n, lang in chosen.items() if lang != ENGLISH)
    return (f"In another language: {who} fetch each notebook in theirs (one notebook, the same tests, graded into the "
            "one gradebook, feedback in its language); the rest in English.\n")


def start(a: argparse.Namespace) -> int:
    server.answer_ctrl_c()  # also when started in a script's background, where SIGINT comes ignored
    preflight.check_names(a.students, a.instructor)
    strangers = sorted(set(a.languages or {}) - set(a.students))
    if strangers:
        raise preflight.NotReady(f"--languages names people who are not students: {strangers}")
    old = load(a.state)
    if old is not None and (old["students"], old["instructor"]) != (a.students, a.instructor):
        raise preflight.NotReady(f"{a.state} holds another class ({old['instructor']}: {old['students']}): run "
                                 f"`python -m bertgrader.hub remove --state {a.state}` first, or pass another --state")
    preflight.check_machine()
    preflight.check_port(a.port)
    view_python = environment.plan(preflight.VENV)
    if old is None:
        preflight.check_new_accounts(a.students + [a.instructor], set())
        if (a.exchange / course.COURSE_ID).exists():
            raise preflight.NotReady(f"{a.exchange / course.COURSE_ID} exists already (another course server's, or "
                                     "a student's): remove it or pass another --exchange")
        if view_python is not None and a.env.exists():
            raise preflight.NotReady(f"{a.env} exists already: remove it or pass another --env")
        try:
            settings = set_up(a, view_python)
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", None) or e
            print(f"error: setting up the class failed: {detail}\n`python -m bertgrader.hub remove --state {a.state}` "
                  "undoes what was made", file=sys.stderr)
            return 1
    else:
        settings = old | {"port": a.port}
        if a.languages is not None and a.languages != old.get("languages", {}):
            settings["languages"] = a.languages
            student_settings(settings)
            instructor_settings(settings)  # a class set up before there were languages releases them now
            print(f"students' languages now: {a.languages or 'English, all'}")
        _save(a.state, settings)
    url = f"http://127.0.0.1:{a.port}"
    t0 = time.monotonic()
    with open(a.state / "jupyterhub.log", "ab") as log:
        proc = server.start_hub(a.state / "settings.json", a.state, preflight.VENV, log)
        try:
            server.wait_until_up(proc, url)
        except BaseException:
            server.stop_hub(proc)
            raise
        print(f"JupyterHub answered in {time.monotonic() - t0:.1f} s (its log: {a.state}/jupyterhub.log)")
        print(guide(settings, url), flush=True)
        status = server.serve_until_stopped(proc)
    print("stopped" if status == 0 else f"JupyterHub exited ({status}): see {a.state}/jupyterhub.log")
    return status


def remove(a: argparse.Namespace) -> int:
    s = load(a.state)
    if s is None:
        print(f"nothing to remove: {a.state}/settings.json does not exist", file=sys.stderr)
        return 2
    for name in s["accounts"]:
        accounts.remove(name)
    if s.get("exchange_course"):
        shutil.rmtree(s["exchange_course"], ignore_errors=True)
    if s.get("env_view"):
        environment.remove_view(Path(s["env_view"]))
    shutil.rmtree(a.state, ignore_errors=True)
    print(f"removed the accounts {s['accounts']}, the exchange's course folder and {a.state}")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    try:
        return start(a) if a.command == "start" else remove(a)
    except preflight.NotReady as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
