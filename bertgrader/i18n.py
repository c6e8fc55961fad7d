"""The exercises in other languages: one source per assignment, a translation catalogue per language (issue 31 §3).

An assignment is written once, in English (solutions/<a>/<a>.py and hidden_tests.py). What a student reads is
extracted from those files into ``locale/<lang>/LC_MESSAGES/exercises/<a>.po``, one message per

- paragraph of a markdown cell (its Markdown as written, soft line breaks included),
- string literal with words in a code cell (setup, visible tests, demos, a solution cell's docstring; never
  inside ``### BEGIN/END SOLUTION``) and in hidden_tests.py (their messages; not their docstrings),
- comment with words in a code cell of the notebook,
- named mistake's ``# why:`` line (mistakes.py), which the feedback page shows when a failure matches it.

A literal's msgid is its text: a plain string's value; an f-string's text with each replacement field written
as in the source (``expected shape {tuple(shape)}, got {tuple(got.shape)}``: literal braces doubled, flag
``python-brace-format``). Implicitly concatenated pieces are one message. A translation keeps every field
(in any order) and every inline code span of a paragraph; ``check`` names any message that does not.

The translated files are never written to disk: ``translate_source`` gives the source with each translated
message put in its place (a literal rewritten as one literal, a comment as one comment, a paragraph as its
lines), which builds the notebook of that language (bertgrader.assignment: same cells, ids and grade ids, so
it is the same notebook for nbgrader's gradebook), and ``translate_module`` gives hidden_tests.py with its
messages substituted, which checks.load runs for a notebook in that language. Code is never translated: only
the text of literals and comments changes, and a test compares the two versions' syntax trees.

    python -m bertgrader.i18n extract            # refresh every catalogue (new messages empty, changed ones fuzzy)
    python -m bertgrader.i18n check              # every translation keeps its fields, parses, and compiles
    python -m bertgrader.i18n progress           # messages translated per assignment and language
    python -m bertgrader.i18n release            # exercises/<lang>/<a>/ from the translated source notebooks

bertgrader's own messages (the grader's, the feedback page's) go through ``gettext(text, language)``, from
``bertgrader/locale/<lang>/LC_MESSAGES/bertgrader.po`` (inside the package, so an installed grader has them).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import contextvars
import difflib
import functools
import io
import re
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ENGLISH = "en"
LANGUAGES = ("zh_CN",)  # the translations; English is the source
CATALOGUES = Path("locale")  # under the course root: <lang>/LC_MESSAGES/exercises/<a>.po
PACKAGE_CATALOGUE = Path(__file__).resolve().parent / "locale"  # <lang>/LC_MESSAGES/bertgrader.po
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")

# A literal or comment a student reads: a word of two letters or more next to a space (not an identifier,
# a dotted name, a dtype, a shape like "(B, T)"). A message that reads the same translated is copied.
_WORD = re.compile(r"(?<![\w.\[])[A-Za-z]{2,}(?![\w.(\]])")
_FIELD = re.compile(r"\{[^{}]*\}")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def language_of(nb) -> str:
    """The language a notebook says it is in (its metadata ``bertgrader.language``), English if it says none or
    one the course does not have. Untrusted: it chooses which text is shown, nothing else."""
    meta = nb.get("metadata", {}) if hasattr(nb, "get") else {}
    value = meta.get("bertgrader", {}).get("language") if isinstance(meta.get("bertgrader"), dict) else None
    return value if isinstance(value, str) and value in LANGUAGES else ENGLISH


# ------------------------------------------------------------------------------------------ bertgrader's own
_current = contextvars.ContextVar("bertgrader_language", default=ENGLISH)


@contextlib.contextmanager
def speaking(language: str):
    """bertgrader's own messages in ``language`` within this block (the grader sets it per notebook)."""
    token = _current.set(language if language in LANGUAGES else ENGLISH)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> str:
    return _current.get()


def own_catalogue(language: str) -> Path:
    return PACKAGE_CATALOGUE / language / "LC_MESSAGES" / "bertgrader.po"


@functools.cache
def _own(language: str) -> dict[str, str]:
    return _translated_entries(own_catalogue(language))


def gettext(text: str, language: str | None = None, **fields) -> str:
    """``text`` (a bertgrader message, ``{name}`` fields) in ``language`` (default: the one being spoken), its
    fields filled from ``fields``; English where the catalogue has no translation."""
    language = language or current()
    found = _own(language).get(text, text) if language != ENGLISH else text
    return found.format(**fields) if fields else found


tr = gettext  # the name bertgrader's modules call it by: tr("...", name=value)


def N_(text: str) -> str:
    """A message kept in a table and translated where it is shown (``tr(table[key])``): marked for extraction."""
    return text


# ------------------------------------------------------------------------------------------------ catalogues
def catalogue(root: Path, assignment: str, language: str) -> Path:
    return Path(root) / CATALOGUES / language / "LC_MESSAGES" / "exercises" / f"{assignment}.po"


def _translated_entries(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    import polib

    return {e.msgid: e.msgstr for e in polib.pofile(str(path)) if e.msgstr and not e.fuzzy and not e.obsolete}


@functools.lru_cache(maxsize=64)
def _table(path: str, mtime: float) -> dict[str, str]:
    return _translated_entries(Path(path))


def translations(root: Path, assignment: str, language: str) -> dict[str, str]:
    """msgid -> msgstr of every translated, non-fuzzy message of an assignment's catalogue."""
    path = catalogue(root, assignment, language)
    return _table(str(path), path.stat().st_mtime) if path.is_file() else {}


# ------------------------------------------------------------------------------------------------- messages
@dataclass(frozen=True)
class Message:
    msgid: str
    kind: str  # "markdown", "string", "f-string", "comment", "why"
    line: int  # 1-based, in its file

    @property
    def fields(self) -> Counter:
        return fields(self.msgid, self.kind)


@dataclass(frozen=True)
class _Span:  # one message in a piece of code: where its text is, what it is
    start: int  # offsets in the code
    end: int
    message: Message
    quote: str = '"'
    raw_fields: tuple = ()


def fields(text: str, kind: str) -> Counter:
    """What a translation must keep: an f-string's replacement fields, a string's format fields, a paragraph's
    inline code spans (each as many times as the English has it)."""
    if kind == "markdown":
        return Counter(m.group(0) for m in _INLINE_CODE.finditer(text))
    if kind in ("string", "f-string"):
        return Counter(_fields_of(text)) if kind == "f-string" else Counter(_FIELD.findall(text.replace("{{", "").replace("}}", "")))
    return Counter()


def _fields_of(template: str) -> list[str]:
    """The replacement fields of an f-string template, ``{expr...}``, braces doubled being literal."""
    out, i = [], 0
    while i < len(template):
        if template.startswith(("{{", "}}"), i):
            i += 2
        elif template[i] == "{":
            j = _field_end(template, i)
            out.append(template[i:j])
            i = j
        else:
            i += 1
    return out


def _field_end(text: str, i: int) -> int:
    """The offset just past the ``}`` that closes the field opening at ``text[i] == "{"``."""
    depth, j, quote = 0, i, None
    while j < len(text):
        ch = text[j]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError(f"unclosed replacement field in {text!r}")


def has_words(text: str) -> bool:
    plain = _FIELD.sub(" ", text)
    return bool(re.search(r"\s", plain)) and bool(_WORD.search(plain))


def _offsets(code: str) -> list[int]:
    starts, at = [0], 0
    for line in code.splitlines(keepends=True):
        at += len(line)
        starts.append(at)
    return starts


def _decode_piece(token: str) -> tuple[str, bool, str, list[str]]:
    """(template text, is an f-string, quote, raw fields) of one STRING token."""
    prefix = re.match(r"[A-Za-z]*", token).group(0)
    body = token[len(prefix):]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
    if "f" not in prefix.lower():
        return ast.literal_eval(token), False, quote, []
    plain = prefix.lower().replace("f", "")
    content = body[len(quote):-len(quote)]
    out, raw_fields, chunk, i = [], [], "", 0

    def flush():
        nonlocal chunk
        if chunk:
            out.append(ast.literal_eval(plain + quote + chunk + quote).replace("{", "{{").replace("}", "}}"))
            chunk = ""
    while i < len(content):
        if content.startswith("{{", i) or content.startswith("}}", i):
            chunk += content[i]
            i += 2
        elif content[i] == "{":
            flush()
            j = _field_end(content, i)
            out.append(content[i:j])
            raw_fields.append(content[i:j])
            i = j
        else:
            chunk += content[i]
            i += 1
    flush()
    return "".join(out), True, quote, raw_fields


def code_spans(code: str, first_line: int = 1, skip_lines: frozenset = frozenset(), docstrings: bool = True,
               comments: bool = True) -> list[_Span]:
    """The messages of a piece of Python: string literals (implicit concatenation as one) and comments with words.
    ``skip_lines``: lines of ``code`` (1-based) whose literals and comments are not messages."""
    starts = _offsets(code)
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    spans, i = [], 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == tokenize.COMMENT and comments and tok.start[0] not in skip_lines:
            text = tok.string[1:].strip()
            if not text.startswith("#") and has_words(text):
                spans.append(_Span(starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1],
                                   Message(text, "comment", first_line + tok.start[0] - 1)))
        if tok.type != tokenize.STRING:
            i += 1
            continue
        group = [tok]
        j = i + 1
        while j < len(tokens) and tokens[j].type in (tokenize.STRING, tokenize.NL):
            if tokens[j].type == tokenize.STRING:
                group.append(tokens[j])
            j += 1
        before = next((t for t in reversed(tokens[:i]) if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
        after = tokens[j] if j < len(tokens) else None
        statement = (before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)) and \
            (after is None or after.type in (tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT))
        i = j
        if any(t.start[0] in skip_lines for t in group) or (statement and not docstrings):
            continue
        if any("b" in re.match(r"[A-Za-z]*", t.string).group(0).lower() for t in group):
            continue
        pieces = [_decode_piece(t.string) for t in group]
        is_f = any(p[1] for p in pieces)
        text = "".join(p[0] if p[1] or not is_f else p[0].replace("{", "{{").replace("}", "}}") for p in pieces)
        if not has_words(text if is_f else text.replace("{", " ")):
            continue
        quotes = {p[2][0] for p in pieces}
        spans.append(_Span(starts[group[0].start[0] - 1] + group[0].start[1],
                           starts[group[-1].end[0] - 1] + group[-1].end[1],
                           Message(text, "f-string" if is_f else "string", first_line + group[0].start[0] - 1),
                           quote=pieces[0][2] if len(pieces) == 1 else pieces[0][2][0] if len(quotes) == 1 else '"',
                           raw_fields=tuple(f for p in pieces for f in p[3])))
    return sorted(spans, key=lambda s: s.start)


def _escape(text: str, quote: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 32:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def render_literal(span: _Span, translation: str) -> str:
    """The Python literal that says ``translation`` where ``span`` said its message: a string's repr; an
    f-string with the English's replacement fields, as written there, wherever the translation puts them."""
    if span.message.kind != "f-string":
        if len(span.quote) == 3:  # a docstring stays one, however it is worded
            return span.quote + translation.replace("\\", "\\\\").replace(span.quote[0], "\\" + span.quote[0]) + span.quote
        return span.quote + _escape(translation, span.quote) + span.quote
    known = sorted(set(span.raw_fields), key=len, reverse=True)
    quotes = [q for q in ('"', "'") if not any(q in f for f in known)]
    quote = span.quote if span.quote in quotes else (quotes[0] if quotes else '"""')
    out, i, text = [], 0, translation
    literal = ""
    while i < len(text):
        if text.startswith("{{", i) or text.startswith("}}", i):
            literal += text[i]
            i += 2
            continue
        field = next((f for f in known if text.startswith(f, i)), None) if text[i] == "{" else None
        if field is None and text[i] in "{}":
            raise ValueError(f"a lone {text[i]!r} in the translation {translation!r} (write {{{{ or }}}} for a brace, "
                             f"or keep a field of the English: {', '.join(known)})")
        if field is None:
            literal += text[i]
            i += 1
            continue
        out.append(_escape(literal, quote[0]).replace("{", "{{").replace("}", "}}"))
        literal = ""
        out.append(field)
        i += len(field)
    out.append(_escape(literal, quote[0]).replace("{", "{{").replace("}", "}}"))
    return f"f{quote}{''.join(out)}{quote}"


def translate_code(code: str, table: dict[str, str], **options) -> str:
    """``code`` with each message that ``table`` translates put in its place (literals, comments)."""
    out, at = [], 0
    for span in code_spans(code, **options):
        found = table.get(span.message.msgid)
        if found is None:
            continue
        out.append(code[at:span.start])
        out.append("# " + found if span.message.kind == "comment" else render_literal(span, found))
        at = span.end
    out.append(code[at:])
    return "".join(out)


# ------------------------------------------------------------------------------------- the assignment files
def _solution_lines(lines: list[str]) -> frozenset:
    """1-based numbers of the lines inside (and on) ``### BEGIN/END SOLUTION`` markers."""
    inside, out = False, set()
    for n, line in enumerate(lines, start=1):
        marker = line.strip()
        if marker == SOLUTION_MARKERS[0]:
            inside = True
        if inside:
            out.add(n)
        if marker == SOLUTION_MARKERS[1]:
            inside = False
    return frozenset(out)


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) index ranges of a markdown cell's paragraphs: runs of comment lines with text, split by
    blank ones and by the solution markers (a written answer's rubric)."""
    out, start = [], None
    for k, line in enumerate(lines + ["#"]):
        text = line[2:] if line.startswith("# ") else line[1:]
        if not text.strip() or text.strip() in SOLUTION_MARKERS:
            if start is not None:
                out.append((start, k))
                start = None
        elif start is None:
            start = k
    return out


def _markdown_text(lines: list[str]) -> str:
    return "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in lines)


def source_messages(text: str, path: Path) -> list[Message]:
    """The messages of an assignment's source (percent format), in order."""
    from bertgrader.assignment import split_cells

    out = []
    for cell in split_cells(text, path):
        if cell.header[:1] == ["[markdown]"]:
            out += [Message(_markdown_text(cell.lines[first:end]), "markdown", cell.first + first)
                    for first, end in _paragraphs(cell.lines)]
        else:
            out += [span.message for span in code_spans("\n".join(cell.lines), cell.first, _solution_lines(cell.lines))]
    return out


def translate_source(text: str, path: Path, table: dict[str, str]) -> str:
    """The source with every message ``table`` translates in its place (the other lines as they were)."""
    from bertgrader.assignment import split_cells

    lines = text.splitlines()
    cells = split_cells(text, path)
    out = lines[:cells[0].line - 1] if cells else lines
    for cell in cells:
        out.append(lines[cell.line - 1])
        if cell.header[:1] == ["[markdown]"]:
            new, at = [], 0
            for first, end in _paragraphs(cell.lines):
                found = table.get(_markdown_text(cell.lines[first:end]))
                if found is None:
                    continue
                new += cell.lines[at:first] + ["# " + line if line else "#" for line in found.split("\n")]
                at = end
            out += new + cell.lines[at:]
        else:
            code = "\n".join(cell.lines)
            out += translate_code(code, table, skip_lines=_solution_lines(cell.lines)).split("\n")
    return "\n".join(out) + "\n"


def module_messages(text: str) -> list[Message]:
    """The messages of a hidden-tests module: its string literals with words, not its docstrings or comments."""
    return [s.message for s in code_spans(text, docstrings=False, comments=False)]


def translate_module(text: str, table: dict[str, str]) -> str:
    return translate_code(text, table, docstrings=False, comments=False)


def why_messages(text: str) -> list[Message]:
    """The ``# why:`` line of each named mistake (mistakes.py): the feedback page shows it to a student whose
    failure matches the mistake."""
    return [Message(line[len("# why: "):], "why", n) for n, line in enumerate(text.splitlines(), start=1)
            if line.startswith("# why: ")]


def assignment_messages(root: Path, name: str) -> list[tuple[str, Message]]:
    """(file name, message) of an assignment: its source's, its hidden tests', its named mistakes' why lines."""
    from bertgrader.assignment import Assignment

    a = Assignment.at(root, name)
    out = [(a.source.name, m) for m in source_messages(a.source.read_text(encoding="utf-8"), a.source)]
    if a.hidden_tests.is_file():
        out += [(a.hidden_tests.name, m) for m in module_messages(a.hidden_tests.read_text(encoding="utf-8"))]
    if a.mistakes_file.is_file():
        out += [(a.mistakes_file.name, m) for m in why_messages(a.mistakes_file.read_text(encoding="utf-8"))]
    return out


# ------------------------------------------------------------------------------------------------- checking
def problem(message: Message, translation: str) -> str | None:
    """What is wrong with a translation of ``message``, or None."""
    kept = fields(translation, message.kind)
    if message.fields != kept:
        lost, added = message.fields - kept, kept - message.fields
        return (f"keeps the English's fields and code exactly: {'missing ' + ', '.join(lost) if lost else ''}"
                f"{'; ' if lost and added else ''}{'not in the English ' + ', '.join(added) if added else ''}")
    if message.kind in ("comment", "why") and "\n" in translation:
        return "a comment's translation is one line"
    if message.kind == "markdown" and re.search(r"\n\s*\n", translation):
        return "a paragraph's translation is one paragraph (no blank line)"
    if message.kind == "f-string":
        try:
            render_literal(_Span(0, 0, message, raw_fields=tuple(message.fields)), translation)
        except ValueError as e:
            return str(e)
    return None


def check(root: Path, name: str, language: str) -> list[str]:
    """Every problem of an assignment's catalogue: a translation that drops a field, and the translated source
    and hidden tests failing to parse."""
    from bertgrader.assignment import Assignment

    path = catalogue(root, name, language)
    table = translations(root, name, language)
    where = {}
    for file, m in assignment_messages(root, name):
        where.setdefault(m.msgid, (file, m))
    out = []
    for msgid, translation in table.items():
        if msgid in where:
            bad = problem(where[msgid][1], translation)
            if bad:
                out.append(f"{path}: {where[msgid][0]}:{where[msgid][1].line}: {msgid[:60]!r}: the translation {bad}")
    a = Assignment.at(root, name)
    for file, text in [(a.source, translate_source(a.source.read_text(encoding="utf-8"), a.source, table)),
                       (a.hidden_tests, translate_module(a.hidden_tests.read_text(encoding="utf-8"), table)
                        if a.hidden_tests.is_file() else "")]:
        try:
            ast.parse(text, str(file))
        except SyntaxError as e:
            out.append(f"{path}: {file.name} translated does not parse: {e}")
    return out


# ------------------------------------------------------------------------------------------------ extracting
def _header(language: str, name: str) -> dict:
    return {"Project-Id-Version": f"bert-course exercises/{name}", "Language": language,
            "MIME-Version": "1.0", "Content-Type": "text/plain; charset=UTF-8", "Content-Transfer-Encoding": "8bit",
            "Plural-Forms": "nplurals=1; plural=0;"}


def update_catalogue(path: Path, found: list[tuple[str, Message]], language: str, name: str) -> dict[str, int]:
    """Write ``path`` with the messages ``found``: a translation kept where the msgid is the same; a message whose
    English changed gets its closest old translation marked fuzzy (with the old msgid), a new one an empty msgstr;
    gone messages dropped. Returns counts."""
    import polib

    old = {e.msgid: e for e in polib.pofile(str(path))} if path.is_file() else {}
    po = polib.POFile(wrapwidth=0)
    po.metadata = _header(language, name)
    entries: dict[str, polib.POEntry] = {}
    counts = Counter()
    orphans = [k for k in old if old[k].msgstr]
    for file, m in found:
        if m.msgid in entries:
            entries[m.msgid].occurrences.append((file, str(m.line)))
            continue
        entry = polib.POEntry(msgid=m.msgid, msgstr="", occurrences=[(file, str(m.line))], comment=m.kind)
        if m.kind == "f-string":
            entry.flags.append("python-brace-format")
        before = old.get(m.msgid)
        if before is not None and before.msgstr:
            entry.msgstr = before.msgstr
            if before.fuzzy:
                entry.flags.append("fuzzy")
                entry.previous_msgid = before.previous_msgid
            counts["kept"] += 1
        else:
            close = difflib.get_close_matches(m.msgid, orphans, n=1, cutoff=0.75) if len(m.msgid) > 12 else []
            if close:
                entry.msgstr = old[close[0]].msgstr
                entry.flags.append("fuzzy")
                entry.previous_msgid = close[0]
                counts["fuzzy"] += 1
            else:
                counts["new"] += 1
        entries[m.msgid] = entry
        po.append(entry)
    counts["dropped"] = len(set(old) - set(entries))
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    return dict(counts)


def extract(root: Path, names: list[str] | None = None) -> None:
    from bertgrader.assignment import sources

    for name in names or sources(root):
        found = assignment_messages(root, name)
        for language in LANGUAGES:
            counts = update_catalogue(catalogue(root, name, language), found, language, name)
            print(f"{catalogue(root, name, language)}: {len(found)} messages "
                  + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    extract_own()


# bertgrader's own messages: every call tr("...") / gettext("...") with a literal first argument, in the package's
# modules and its templates ({{ tr("...") }}).
_TEMPLATE_CALL = re.compile(r"""\btr\(\s*(?P<q>["'])(?P<text>.*?)(?P=q)""")


def own_messages() -> list[tuple[str, Message]]:
    package = Path(__file__).resolve().parent
    out = []
    for path in sorted(package.rglob("*.py")):
        if "hub" in path.relative_to(package).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("tr", "gettext", "N_") and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                out.append((str(path.relative_to(package)), Message(node.args[0].value, "string", node.lineno)))
    for path in sorted((package / "templates").rglob("*.tpl")) + sorted((package / "templates").rglob("*.j2")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in _TEMPLATE_CALL.finditer(line):
                out.append((str(path.relative_to(package)), Message(m.group("text"), "string", n)))
    return sorted(out, key=lambda fm: (fm[0], fm[1].line))


def extract_own() -> None:
    found = own_messages()
    for language in LANGUAGES:
        path = own_catalogue(language)
        counts = update_catalogue(path, found, language, "bertgrader")
        print(f"{path}: {len(found)} messages " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))


def progress(root: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """{(assignment, language): (translated, messages)}."""
    from bertgrader.assignment import sources

    out = {}
    for name in sources(root):
        msgids = {m.msgid for _, m in assignment_messages(root, name)}
        for language in LANGUAGES:
            table = translations(root, name, language)
            out[(name, language)] = (len(msgids & set(table)), len(msgids))
    return out


def check_own(language: str) -> list[str]:
    """Every translation of bertgrader's own catalogue that drops or adds a format field."""
    path = own_catalogue(language)
    return [f"{path}: {msgid[:60]!r}: the translation keeps the English's fields exactly" for msgid, found in
            _translated_entries(path).items() if fields(msgid, "string") != fields(found, "string")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bertgrader.i18n", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["extract", "check", "progress", "release"])
    parser.add_argument("names", nargs="*", help="assignments (default: all)")
    parser.add_argument("--root", type=Path, default=Path("."), help="the course (default: the working directory)")
    args = parser.parse_args(argv)
    from bertgrader.assignment import sources

    names = args.names or sources(args.root)
    if args.command == "extract":
        extract(args.root, names)
        return 0
    if args.command == "progress":
        for (name, language), (done, total) in progress(args.root).items():
            if name in names:
                print(f"{name:20} {language:6} {done:4}/{total:<4} {100 * done / max(total, 1):5.1f}%")
        return 0
    if args.command == "release":
        from bertgrader.translated import write_release

        for name in names:
            for language in LANGUAGES:
                print(write_release(args.root, name, language))
        return 0
    problems = [p for name in names for language in LANGUAGES for p in check(args.root, name, language)]
    problems += [p for language in LANGUAGES for p in check_own(language)]
    print("\n".join(problems) if problems else f"translations: no problem ({len(names)} assignments)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
