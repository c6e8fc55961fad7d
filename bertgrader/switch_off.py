"""A copy of bertlib in which the functions an assignment asks students to write are stubs.

While a notebook is graded, its kernel sees this copy in place of bertlib, so calling bertlib's version
of the function being written fails however it is reached: directly, through an alias, through a copy
of its code object, or by re-executing its source (``inspect.getsource`` finds the stub). Everything
else in bertlib is the real code, unchanged.

Names are dotted paths: ``bertlib.masking.mask_tokens`` (a function), ``bertlib.modeling.BertModel``
(every method of a class, ``__init__`` included), ``bertlib.embeddings.BertEmbeddings.forward`` (one
method).
"""
from __future__ import annotations

import ast
import atexit
import compileall
import shutil
import tempfile
from pathlib import Path

from bertgrader.i18n import ENGLISH, tr
from bertgrader.sandbox import package_dir

_cache: dict[tuple, Path] = {}  # (targets..., language) -> the copy
# What every stub says, and how the grader recognises one in a kernel (probe_code): defined here only.
STUB_MARKER = "is switched off while your notebook is graded"


def _stub_body(qualname: str, language: str = ENGLISH) -> list[ast.stmt]:
    if language == ENGLISH:
        return ast.parse(f"raise RuntimeError({f'{qualname} {STUB_MARKER}: write it yourself'!r})").body
    # In another language the marker stays in the stub's source (probe_code reads it), its message translated.
    message = tr("{name} is switched off while your notebook is graded: write it yourself", language, name=qualname)
    return ast.parse(f"{STUB_MARKER!r}\nraise RuntimeError({message!r})").body


def probe_code(name: str) -> str:
    """Code for a kernel that prints STUBBED if bertlib's ``name`` (a dotted path, as in SWITCHED_OFF) is the
    stub this module writes, REAL if it is bertlib's own, and leaves no name behind in the kernel."""
    return (f"import importlib as _i, inspect as _s\n_p = {name!r}.split('.')\n"
            "for _n in range(len(_p), 0, -1):\n"
            "    try:\n        _o, _r = _i.import_module('.'.join(_p[:_n])), _p[_n:]\n        break\n"
            "    except ImportError:\n        pass\n"
            "for _a in _r:\n    _o = getattr(_o, _a)\n"
            f"print('STUBBED' if {STUB_MARKER!r} in _s.getsource(_o) else 'REAL')\n"
            "del _i, _s, _p, _n, _o, _r")


class _Stubber(ast.NodeTransformer):
    def __init__(self, module: str, targets: set[str], language: str = ENGLISH):
        self.module, self.targets, self.stack, self.done = module, targets, [], set()
        self.language = language

    def _path(self, name):
        return ".".join([self.module, *self.stack, name])

    def visit_ClassDef(self, node):
        path = self._path(node.name)
        whole = path in self.targets
        self.stack.append(node.name)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if whole or self._path(item.name) in self.targets:
                    item.body = _stub_body(self._path(item.name), self.language)
                    self.done.add(self._path(item.name))
            elif isinstance(item, ast.ClassDef):
                self.visit_ClassDef(item)
        self.stack.pop()
        if whole:
            self.done.add(path)
        return node

    def visit_FunctionDef(self, node):
        path = self._path(node.name)
        if path in self.targets:
            node.body = _stub_body(path, self.language)
            self.done.add(path)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def stubbed_bertlib(targets, language: str = ENGLISH) -> Path:
    """A folder holding bertlib with ``targets`` stubbed, their message in ``language`` (made once per set of
    targets, language and process), with its modules' bytecode written beside them: a graded kernel, which may not
    write there (nor anywhere, PYTHONDONTWRITEBYTECODE), would otherwise compile every module of bertlib again at
    each notebook's first import (0.04 s of CPU)."""
    targets = tuple(sorted(set(targets)))
    key = (*targets, language)
    if key in _cache and _cache[key].is_dir():
        return _cache[key]
    out = Path(tempfile.mkdtemp(prefix="bertlib-graded-")) / "bertlib"
    atexit.register(shutil.rmtree, out.parent, True)  # one copy per process, removed when it exits
    shutil.copytree(package_dir("bertlib"), out, ignore=shutil.ignore_patterns("__pycache__"))
    wanted, done = set(targets), set()
    for path in sorted(out.rglob("*.py")):
        module = "bertlib." + ".".join(path.relative_to(out).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        if not any(t.startswith(module + ".") for t in wanted):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        stubber = _Stubber(module, wanted, language)
        tree.body = [stubber.visit(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     else node for node in tree.body]
        done |= stubber.done
        path.write_text(ast.unparse(tree) + "\n", encoding="utf-8")
    missing = wanted - done
    if missing:
        shutil.rmtree(out.parent, ignore_errors=True)
        raise ValueError(f"not functions, methods or classes of bertlib: {sorted(missing)}")
    compileall.compile_dir(out, quiet=2)
    _cache[key] = out
    return out

