"""What the course's nbgrader_config.py cannot say as settings, in one call: ``configure(c)``.

nbgrader_config.py is settings only (``c.X = Y``), then ``configure(c)``, which
- checks that the settings keep the grader's own steps (a configuration edited so that autograde would run
  student code outside TrustedExecute, or skip CleanSubmission, stops with a message naming the setting);
- checks every submission before nbgrader reads it (``bertgrader.submission.install``);
- before ``nbgrader autograde`` grades anything, with the assignment and gradebook nbgrader itself parsed from
  its command line (``autograde X``, ``--assignment X``, ``--assignment=X``, ``--db ...``): refuses to grade when
  the sandbox cannot run here (unless ``--TrustedExecute.sandbox=none``), and registers an assignment the
  gradebook lacks from solutions/, as ``python -m bertgrader`` does (a fresh clone has no gradebook.db);
- makes ``nbgrader validate`` name each failing cell's reason first, whole, and exit 1 on a failure
  (``bertgrader.validate``);
- silences the one SQLAlchemy warning nbgrader's gradebook raises at every autograde (nothing to act on), and
  logs ``--force``'s "Removing existing ..." as INFO, not WARNING (it is what was asked);
- cleans every page's HTML after rendering, whatever a student's markdown or output holds
  (``bertgrader.sanitize.install``: the feedback page, Formgrader's, ``jupyter nbconvert --config``);
- renders Formgrader's pages offline and verdict first (``bertgrader.feedback.offline_formgrader``).
Each hook is installed once per process, however often the configuration is loaded.
"""
from __future__ import annotations

import copy
import fnmatch
import functools
from pathlib import Path


def configure(c) -> None:
    """Called last in nbgrader_config.py with its configuration ``c``."""
    _check_steps(c)
    from bertgrader.submission import install as check_submissions

    check_submissions()
    _quiet_gradebook()
    _quiet_force()
    _before_autograde()
    from bertgrader.validate import install as validate_reason_first

    validate_reason_first()  # nbgrader validate: each failure's reason first, whole; exit 1 on a failure
    from bertgrader.feedback import offline_formgrader
    from bertgrader.sanitize import install as sanitise_pages

    sanitise_pages(c)  # every page's HTML cleaned after rendering: feedback, Formgrader, nbconvert --config
    offline_formgrader(c)  # Formgrader's pages offline and verdict first, as the feedback page


def _check_steps(c) -> None:
    from bertgrader.preprocessors import CleanSubmission, TrustedExecute

    for setting, step in (("Autograde.autograde_preprocessors", TrustedExecute),
                          ("Autograde.sanitize_preprocessors", CleanSubmission)):
        section, name = setting.split(".")
        steps = c[section][name] if name in c[section] else []
        if not steps or steps[0] is not step:
            raise ValueError(f"nbgrader_config.py: c.{setting} must start with bertgrader's {step.__name__} "
                             f"(it has {[getattr(s, '__name__', s) for s in steps]})")
    from nbgrader.preprocessors import OverwriteCells

    from bertgrader.translated import RestoreTranslatedCells

    steps = list(c.Autograde.sanitize_preprocessors) if "sanitize_preprocessors" in c.Autograde else []
    if OverwriteCells in steps and steps[steps.index(OverwriteCells) + 1:][:1] != [RestoreTranslatedCells]:
        # nbgrader puts the English read-only cells back into a Chinese notebook; this step puts its own back
        raise ValueError("nbgrader_config.py: c.Autograde.sanitize_preprocessors must have bertgrader's "
                         "RestoreTranslatedCells right after OverwriteCells (a translated notebook's read-only cells "
                         "would come back in English)")


# ------------------------------------------------------------------------------ nbgrader autograde
def _once(install):
    """Run ``install`` once per process (nbgrader loads the configuration more than once)."""
    return functools.lru_cache(maxsize=1)(install)


@_once
def _quiet_gradebook() -> None:
    """nbgrader's gradebook (nbgrader/api.py) builds submissions in a way SQLAlchemy 2 warns about at every
    autograde ("Object of type <SubmittedAssignment> not in session, add operation ... will not proceed"): a
    block of warnings on every run that no instructor can act on, and the grades are right. Only that warning,
    and only from nbgrader's gradebook, is silenced."""
    import warnings

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session", category=SAWarning,
                            module=r"nbgrader\.api")


@_once
def _quiet_force() -> None:
    """``--force`` (generate_assignment, autograde, generate_feedback) logs a WARNING for every folder or notebook it
    replaces, which is what it was asked to do: the same line as INFO (shown at nbgrader's default log level)."""
    import logging

    class AsInfo(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            if record.levelno == logging.WARNING and str(record.msg).startswith(
                    ("Removing existing assignment: ", "Removing existing notebook: ")):
                record.levelno, record.levelname = logging.INFO, "INFO"
                return logging.getLogger(record.name).isEnabledFor(logging.INFO)
            return True

    for app in ("GenerateAssignmentApp", "AutogradeApp", "GenerateFeedbackApp", "ReleaseFeedbackApp"):
        logging.getLogger(app).addFilter(AsInfo())


@_once
def _before_autograde() -> None:
    """Wrap the Autograde converter's start: when ``nbgrader autograde`` runs it (not ``python -m bertgrader``'s
    workers, which check and register once for the whole class), refuse or register first."""
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.converters.autograde import Autograde

    original = Autograde.start

    @functools.wraps(original)
    def start(self) -> None:
        if isinstance(self.parent, AutogradeApp):
            refuse_without_sandbox(self)
            register_missing(self)
        original(self)

    Autograde.start = start


def refuse_without_sandbox(converter) -> None:
    """Exit (status 2) before the gradebook is touched if the sandbox cannot run and was not turned off."""
    from bertgrader.preprocessors import TrustedExecute
    from bertgrader.sandbox import SandboxUnavailable, check_available

    if TrustedExecute(config=converter.config).sandbox == "none":
        return
    try:
        check_available()
    except SandboxUnavailable as e:
        converter.log.error("refusing to grade: %s", e)
        raise SystemExit(2) from None


def register_missing(converter) -> None:
    """Put the assignments matching nbgrader's assignment id (a name or a pattern) that the gradebook lacks into
    it from the source folder, as nbgrader generate_assignment does, leaving the release folder untouched."""
    from nbgrader.api import Gradebook, MissingEntry

    from bertgrader.classes.nbgrader_run import register_assignment

    cd = converter.coursedir
    source = Path(cd.root) / cd.source_directory
    if not cd.assignment_id or not source.is_dir():
        return
    names = sorted(d.name for d in source.iterdir() if d.is_dir() and fnmatch.fnmatch(d.name, cd.assignment_id))
    with Gradebook(cd.db_url, cd.course_id) as gb:
        missing = []
        for name in names:
            try:
                gb.find_assignment(name)
            except MissingEntry:
                missing.append(name)
    cfg = copy.deepcopy(converter.config)
    cfg.CourseDirectory.root, cfg.CourseDirectory.db_url = cd.root, cd.db_url
    for name in missing:
        converter.log.info("%s is not in the gradebook yet: registering it from %s/%s (as nbgrader "
                           "generate_assignment does; %s/ untouched)", name, cd.source_directory, name,
                           cd.release_directory)
        register_assignment(cfg, name)
