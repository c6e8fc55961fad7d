"""A pretraining corpus that needs no download: the documentation every Python installation carries.

Book: chapter 11 ("Pretraining a tiny BERT end to end").

Two sources, both read at run time from the running interpreter, so nothing is fetched and nothing ships:

* ``pydoc_data.topics``: the Language Reference sections that ``help("assert")`` prints, one document per
  topic (English about Python);
* the standard library's docstrings, read from the ``.py`` sources with ``ast`` (never imported: importing
  ``antigravity`` opens a browser), one document per module: the module's docstring, then its classes' and
  functions' docstrings in source order.

``corpus_fingerprint`` counts the documents, sentences and characters of a run's corpus (chapter 11 shows
them).

The text is that of the interpreter that runs the code, so another Python version gives a (slightly)
different corpus; ``corpus_fingerprint`` says which one was used.

Held-out data is split *by document group*, never by sentence: a group is a top-level package with its
leading underscore dropped (``email.mime.text`` and ``email.parser`` are one group, ``_pyio`` and ``io`` are
one group, each pydoc topic its own), so that near-copies of a held-out text are never trained on.

The small seeded generators chapter 12's experiments use where real text cannot guarantee a property are in
``projects/pretraining_experiments/synthetic.py``, beside the library.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import random
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

# Parts of the standard library that are not documentation of the library: its own tests, the IDLE and
# 2to3 applications, demos, and vendored copies of third-party code.
_SKIP_TOP = {"test", "idlelib", "lib2to3", "turtledemo", "site-packages", "ensurepip", "pydoc_data", "__phello__",
             "encodings"}  # encodings: a hundred copies of the same generated codec docstring
_SKIP_PART = {"test", "tests", "idle_test"}


@dataclass(frozen=True)
class Document:
    name: str  # "topic:assert" or "module:email.parser"
    group: str  # what the held-out split keeps together: "topic:assert", "module:email"
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


# ----------------------------------------------------------------------------- sentence splitting
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_RULE_LINE = re.compile(r"^\s*([*=\-~^#]{3,})\s*$")
_RULE_RUN = re.compile(r"([-=+~*^_#.|])\1{3,}")  # "+-------+" table borders, "....." leaders


def split_paragraphs(text: str) -> list[str]:
    """Blank lines separate paragraphs; the lines of a paragraph are joined with spaces. Underlines of
    headings (``*****``, ``=====``) are dropped."""
    paragraphs, lines = [], []
    for line in text.splitlines():
        if _RULE_LINE.match(line):
            continue
        if line.strip():
            lines.append(line.strip())
        elif lines:
            paragraphs.append(" ".join(lines))
            lines = []
    if lines:
        paragraphs.append(" ".join(lines))
    return paragraphs


def _mostly_words(sentence: str) -> bool:
    visible = [c for c in sentence if not c.isspace()]
    return bool(visible) and sum(c.isalpha() for c in visible) >= 0.6 * len(visible)


def split_sentences(text: str, max_chars: int = 400) -> list[str]:
    """Cut text into sentences: paragraphs first, then after '.', '!' or '?' followed by a capital or a digit.

    Good enough for documentation ("e.g. foo" is sometimes cut, which costs nothing here). Over-long
    "sentences" (code listings, grammar rules) are cut at spaces every ``max_chars`` characters, so that
    one sentence never fills a whole training sequence on its own.
    """
    sentences = []
    for paragraph in split_paragraphs(text):
        for sentence in _SENTENCE_END.split(paragraph):
            sentence = _RULE_RUN.sub(" ", sentence).strip()
            if not _mostly_words(sentence):
                continue  # tables, ASCII diagrams and formulas: not English
            while len(sentence) > max_chars:
                cut = sentence.rfind(" ", 0, max_chars)
                cut = cut if cut > 0 else max_chars
                sentences.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence:
                sentences.append(sentence)
    return sentences


# ----------------------------------------------------------------------------- the two sources
def pydoc_topic_documents() -> list[Document]:
    """One document per ``pydoc_data.topics`` entry, in the dict's (alphabetical) order."""
    from pydoc_data.topics import topics

    docs = []
    for name in sorted(topics):
        sentences = split_sentences(topics[name])
        if sentences:
            docs.append(Document(f"topic:{name}", f"topic:{name}", tuple(sentences)))
    return docs


def _docstrings_in_order(node: ast.AST):
    """The docstrings of a module, then of its classes and functions, depth first in source order."""
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        doc = ast.get_docstring(node)
        if doc:
            yield doc
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _docstrings_in_order(child)


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_modules(root: Path | None = None):
    """(module name, parsed source) of each module of the standard library that documents the library, in path
    order: its own tests, applications and vendored code (``_SKIP_TOP``, ``_SKIP_PART``) are left out, and a
    file that does not parse is skipped. Read with ``ast``, nothing is imported. The corpus and the
    fine-tuning datasets (``projects/pretraining_experiments/datasets/build_datasets.py``) both read the library
    through this."""
    root = stdlib_root() if root is None else Path(root)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in _SKIP_TOP or _SKIP_PART & set(rel.parts[:-1]) or rel.parts[0].startswith("test"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # e.g. the deliberately broken files some packages carry
        yield ".".join(rel.with_suffix("").parts).removesuffix(".__init__"), tree


def module_documents(root: Path | None = None) -> list[Document]:
    """One document per standard-library module that has docstrings, read with ``ast`` (nothing is imported)."""
    docs = []
    for module, tree in stdlib_modules(root):
        sentences = [s for doc in _docstrings_in_order(tree) for s in split_sentences(doc)]
        if not sentences:
            continue
        group = module.split(".")[0].lstrip("_") or module
        docs.append(Document(f"module:{module}", f"module:{group}", tuple(sentences)))
    return docs


def _cache_file(sources) -> Path:
    """Where the parsed corpus is kept: keyed by the interpreter, its stdlib and this file's own code,
    so a change of the extraction rules can never be served an old corpus."""
    key = hashlib.sha256(f"{sys.version}|{stdlib_root()}|{sources}".encode() + Path(__file__).read_bytes())
    base = Path(os.environ.get("BERTLIB_CACHE", Path.home() / ".cache" / "bertlib"))
    return base / f"corpus-{key.hexdigest()[:16]}.json"


@functools.lru_cache(maxsize=4)
def load_documents(sources: tuple[str, ...] = ("topics", "modules"), cache: bool = True) -> tuple[Document, ...]:
    """All documents of the chosen sources, in a fixed order.

    Parsing every stdlib file takes seconds, so the result is also kept on disk (under
    ``$BERTLIB_CACHE`` or ``~/.cache/bertlib``) unless ``cache=False``; it is exactly what parsing gives.
    """
    path = _cache_file(sources)
    if cache and path.is_file():
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            return tuple(Document(r[0], r[1], tuple(r[2])) for r in rows)
        except (ValueError, IndexError, TypeError):
            pass  # a damaged cache file is rebuilt
    docs: list[Document] = []
    if "topics" in sources:
        docs += pydoc_topic_documents()
    if "modules" in sources:
        docs += module_documents()
    if cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps([[d.name, d.group, list(d.sentences)] for d in docs]), encoding="utf-8")
            tmp.replace(path)  # atomic: parallel runs (torchrun) never read half a file
        except OSError:
            pass  # a read-only home only costs the seconds
    return tuple(docs)


def corpus_fingerprint(docs) -> dict:
    """What a result was computed on: the Python version, the counts, and a hash of the text."""
    h = hashlib.sha256()
    for doc in docs:
        h.update(doc.name.encode())
        for s in doc.sentences:
            h.update(s.encode())
    return {
        "python": sys.version.split()[0],
        "documents": len(docs),
        "sentences": sum(len(d.sentences) for d in docs),
        "characters": sum(len(s) for d in docs for s in d.sentences),
        "sha256": h.hexdigest()[:16],
    }


def split_documents(docs, heldout_fraction: float = 0.1, seed: int = 0):
    """(train, heldout) by document group: a group goes wholly to one side.

    The held-out groups are drawn with ``random.Random(seed)`` until they hold at least
    ``heldout_fraction`` of the sentences; the order of documents is kept on both sides.
    """
    if not 0.0 < heldout_fraction < 1.0:
        raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
    sizes: dict[str, int] = {}
    for doc in docs:
        sizes[doc.group] = sizes.get(doc.group, 0) + len(doc.sentences)
    groups = sorted(sizes)
    random.Random(seed).shuffle(groups)
    total, held, heldout_groups = sum(sizes.values()), 0, set()
    for g in groups:
        if held >= heldout_fraction * total:
            break
        if sizes[g] > 0.5 * heldout_fraction * total:
            continue  # one huge group alone would make the held-out set one topic
        heldout_groups.add(g)
        held += sizes[g]
    train = [d for d in docs if d.group not in heldout_groups]
    heldout = [d for d in docs if d.group in heldout_groups]
    return train, heldout
