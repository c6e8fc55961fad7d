"""Write the three fine-tuning datasets into ``bertlib/training/datasets/`` (shipped there as package data: the
library's ``finetune`` command reads them) from text that ships with Python (no download).

    python projects/pretraining_experiments/datasets/build_datasets.py   # rewrites bertlib/training/datasets/*/{train,test}.jsonl

The files in the repository were written by this script under CPython 3.11.7; another Python version
gives slightly different files (its documentation differs), which is why the files are shipped rather
than rebuilt at run time. See bertlib/training/datasets/README.md for what each file holds, where it comes from, its licence.
"""
from __future__ import annotations

import ast
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository root, above projects/pretraining_experiments/datasets/
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bertlib" / "training" / "datasets"  # bertlib.training.task_data.DATA_DIR

from bertlib.training.corpus import split_sentences, stdlib_modules  # noqa: E402

SEED = 0

# ----------------------------------------------------------------------------- 1. sentence classification
# Which part of the standard library a docstring's summary line comes from, by top-level module.
FAMILIES = {
    "text": ["string", "re", "textwrap", "difflib", "unicodedata", "stringprep", "html", "_markupbase", "gettext",
             "locale", "shlex", "codecs", "sre_parse", "sre_compile", "reprlib", "pprint", "json", "csv", "xml",
             "configparser", "tomllib", "plistlib"],
    "files": ["os", "pathlib", "shutil", "glob", "fnmatch", "tempfile", "filecmp", "stat", "fileinput", "_pyio",
              "zipfile", "tarfile", "gzip", "bz2", "lzma", "ntpath", "posixpath", "genericpath", "linecache",
              "shelve", "dbm", "mailcap", "netrc", "chunk"],
    "internet": ["socket", "ssl", "http", "urllib", "email", "smtplib", "ftplib", "imaplib", "poplib", "nntplib",
                 "mailbox", "mimetypes", "wsgiref", "xmlrpc", "socketserver", "ipaddress", "webbrowser",
                 "telnetlib", "base64", "quopri", "cgi", "smtpd"],
    "concurrency": ["threading", "multiprocessing", "asyncio", "concurrent", "queue", "subprocess", "sched",
                    "selectors", "asyncore", "asynchat", "_threading_local"],
    "numbers": ["_pydecimal", "fractions", "statistics", "random", "numbers", "colorsys", "_pylong", "datetime",
                "_strptime", "calendar", "heapq", "bisect"],
    "devtools": ["unittest", "doctest", "pdb", "bdb", "trace", "timeit", "cProfile", "profile", "pstats", "inspect",
                 "dis", "traceback", "ast", "tokenize", "pydoc", "tabnanny", "py_compile", "compileall", "cmd",
                 "code", "codeop", "pickletools", "symtable", "warnings"],
}
PER_CLASS = 300
TEST_FRACTION = 0.25


def _functions(tree):
    """(name, first sentence of the docstring) of every public function and method, in source order."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            doc = ast.get_docstring(node)
            if doc:
                sentences = split_sentences(doc)
                if sentences:
                    yield node.name, sentences[0]


def docstring_topics(files, rng):
    by_family = defaultdict(dict)  # family -> text -> module (dict: duplicates collapse, order kept)
    family_of = {m: f for f, ms in FAMILIES.items() for m in ms}
    for module, tree in files:
        family = family_of.get(module.split(".")[0])
        if family is None:
            continue
        for _, summary in _functions(tree):
            n_words = len(summary.split())
            if 4 <= n_words <= 30 and summary.endswith("."):
                by_family[family].setdefault(summary, module)
    train, test = [], []
    for family in sorted(FAMILIES):
        items = sorted(by_family[family].items())
        rng.shuffle(items)
        items = items[:PER_CLASS]
        n_test = round(TEST_FRACTION * len(items))
        for i, (text, module) in enumerate(items):
            (test if i < n_test else train).append({"text": text, "label": family, "module": module})
    rng.shuffle(train)
    rng.shuffle(test)
    return train, test


# ----------------------------------------------------------------------------- 2. token tagging
_QUOTED = re.compile(r'"([^"]{1,60})"')
_WORD = re.compile(r"[\w.]*\w|[^\w\s]")  # identifiers stay whole (__debug__, os.path.join); punctuation alone


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def code_span_sentences(rng):
    """pydoc topic sentences with the code spans' quotes removed, each word tagged B-CODE, I-CODE or O."""
    from pydoc_data.topics import topics

    by_topic, seen = {}, set()
    for name in sorted(topics):
        rows = []
        for sentence in split_sentences(topics[name]):
            if sentence.count('"') % 2 or not _QUOTED.search(sentence) or "::=" in sentence or sentence in seen:
                continue  # unbalanced quotes, no code, grammar rules, repeats
            seen.add(sentence)
            tokens, tags = [], []
            for i, part in enumerate(_QUOTED.split(sentence)):  # even parts are prose, odd parts are code
                ws = words(part)
                tokens += ws
                tags += ["O"] * len(ws) if i % 2 == 0 else ["B-CODE"] + ["I-CODE"] * (len(ws) - 1)
            if 5 <= len(tokens) <= 40 and "B-CODE" in tags:
                rows.append({"tokens": tokens, "tags": tags, "topic": name})
        by_topic[name] = rows
    # whole topics go to the test side until it holds TEST_FRACTION of the sentences
    names = sorted(by_topic)
    rng.shuffle(names)
    total, train, test = sum(map(len, by_topic.values())), [], []
    for name in names:
        (test if len(test) < TEST_FRACTION * total else train).extend(by_topic[name])
    return train, test


# ----------------------------------------------------------------------------- 3. extractive QA
def function_qa(files, rng):
    """SQuAD-style examples: a context listing three functions of one module with their summary lines,
    and a question whose answer is a span of it: a function's name, or what it does."""
    modules = []
    for module, tree in files:
        entries, names = [], set()
        for name, summary in _functions(tree):
            summary = summary.rstrip(".")
            if name not in names and 3 <= len(summary.split()) <= 9 and '"' not in summary:
                entries.append((name, summary))
                names.add(name)
        if len(entries) >= 3:
            modules.append((module, entries))
    rng.shuffle(modules)
    n_test = round(TEST_FRACTION * len(modules))
    train, test = [], []
    for m, (module, entries) in enumerate(modules):
        for start in range(0, len(entries) - 2, 3):
            group = entries[start:start + 3]
            context, offsets = "", []
            for name, summary in group:
                offsets.append((len(context), len(context) + len(name) + 2))  # name, then summary after ": "
                context += f"{name}: {summary}. "
            context = context.strip()
            for k, (name, summary) in enumerate(group):  # both questions about every entry
                for question, answer, start_char in (
                        (f"What does {name} do?", summary, offsets[k][1]),
                        (f"Which function does this: {summary[0].lower() + summary[1:]}?", name, offsets[k][0])):
                    assert context[start_char:start_char + len(answer)] == answer
                    row = {"context": context, "question": question,
                           "answers": {"text": [answer], "answer_start": [start_char]}, "module": module}
                    (test if m < n_test else train).append(row)
    rng.shuffle(train)
    rng.shuffle(test)
    return train, test


def write(name, train, test):
    folder = OUT / name
    folder.mkdir(exist_ok=True)
    for split, rows in (("train", train), ("test", test)):
        with open(folder / f"{split}.jsonl", "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{name}: {len(train)} train, {len(test)} test")


def main():
    files = list(stdlib_modules())
    train, test = docstring_topics(files, random.Random(SEED))
    write("docstring_topics", train, test)
    print("  labels:", dict(sorted(Counter(r["label"] for r in train + test).items())))
    write("code_spans", *code_span_sentences(random.Random(SEED)))
    write("function_qa", *function_qa(files, random.Random(SEED)))


if __name__ == "__main__":
    main()
