"""A tiny Sphinx extension for the book (enabled in _config.yml): drop duplicate <script> tags.

jupyter-book 1.0.4 with sphinx-thebe 0.3.1 registers thebe's inline configuration twice (once with filename
None, once with filename "" after the environment is pickled, so Sphinx does not see them as equal), and the second
`const THEBE_JS_URL = ...` is a JavaScript error on every page ("Identifier has already been declared").
"""
from __future__ import annotations


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", None) or "", repr(sorted(attributes.items())))  # None and "" alike
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept


def setup(app):
    # Early (priority < 500): html-page-context stops at the first handler that returns a template name.
    app.connect("html-page-context", _dedupe_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
