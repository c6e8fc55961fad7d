"""The book's Sphinx extension (enabled in _config.yml): pages that need no network, and the static demos.

- Drops duplicate <script> tags: jupyter-book 1.0.4 with sphinx-thebe 0.3.1 registers thebe's inline
  configuration twice (once with filename None, once with "" after the environment is pickled, so Sphinx does
  not see them as equal), and the second `const THEBE_JS_URL = ...` is a JavaScript error on every page.
- Drops every script that would reach the network or show dead widgets: any http(s) URL (the ipywidgets
  embed manager and require.js that myst-nb adds to a page whose notebook saved widget state), the saved
  widget state itself, and Thebe (its loader and configuration; the book has no live kernel). The ipywidgets
  demos are for JupyterLab; their cells carry the remove-cell tag.
- Static demos (course/static_demo.py): copies Plotly's JavaScript (the cartesian bundle the venv's npm
  installed, or the full one the plotly wheel ships) into _static (nothing third-party is committed) and loads it, with static_demo.js, only on the pages that hold a
  demo. The file name carries Plotly's version, so browsers cache it across pages and a new Plotly is fetched.
- Notebook downloads that work from disk: a page with download links embeds the notebooks and
  file_downloads.js saves them when the page is opened as a file (browsers show raw JSON otherwise).
- The repository button: shown only when `repository.url` in _config.yml holds a URL; the landing page's
  `git clone @REPOSITORY_URL@` line shows the same URL, and is left out while there is none.
- course.css and page.js on every page: everything fits its column (figures scaled, wide tables stacked on a
  phone, formulas scaled, code wrapped; a box that still scrolls gets a visible hint and keyboard focus),
  quiz answers announced, dark-mode fixes.
- Figures described: every figure a chapter draws carries its caption and alt text inside its PNG
  (course/plots.py, ``describe_figures``); here each becomes a <figure> with that alt text and a <figcaption>.
- Figures redrawn for a phone: a figure's PNG may carry a second one drawn for a phone (course/plots.py,
  ``narrow_figure``); it is taken out (the page's PNG is left without it) and the page serves it under 600 px
  (``<picture>``: a browser fetches only the one it shows). Each <img> names the smallest text of each version
  in pixels (``data-text-px``, ``data-narrow-text-px``), which tests/test_pages.py checks at a phone's width.
- Two editions (course/i18n.py): every page's header links to the same page of the other edition, relatively
  (the Chinese site is _build/html/zh_CN/), with a <link rel="alternate" hreflang>. In the Chinese edition a
  message with words and no translation yet (its English changed, or it was never translated) stays English,
  marked: class course-untranslated, lang="en", a dotted left edge (i18n.css); and each page's count of messages
  to translate and translated goes to _build/zh_CN/translation_progress.json.
- A page whose notebook course/build.py executed again since Sphinx last read it (a run it reads computed anew,
  its figures drawn by a new course/plots.py) is read again: myst-nb itself looks only at the source's time.
"""
from __future__ import annotations

import base64
import html
import json
import re
import shutil
import urllib.parse
from pathlib import Path

STATIC = Path(__file__).with_name("_static")
TEMPLATES = Path(__file__).with_name("_templates")
_EXTERNAL = re.compile(r"^(https?:)?//", re.I)
_DROPPED_TYPES = {"application/vnd.jupyter.widget-state+json", "text/x-thebe-config"}
_THEBE_CONFIG = re.compile(r'<script type="text/x-thebe-config">.*?</script>\s*', re.S)


# Plotly's cartesian bundle (scatter, bar, heatmap: every trace the demos draw) from npm, 1.5 MB against the
# full bundle's 4.8 MB. `make venv` installs it into the venv (PLOTLY_JS in the Makefile); without npm the book
# uses the full bundle the plotly wheel ships. Either one is the plotly.js version the wheel was built for.
CARTESIAN_JS = Path("js") / "node_modules" / "plotly.js-cartesian-dist-min" / "plotly-cartesian.min.js"


def _plotly_js_version(path: Path) -> str | None:
    match = re.search(r"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+)", path.read_text(encoding="utf-8", errors="replace")[:400])
    return match.group(1) if match else None


def plotly_js_choice() -> tuple[Path, str]:
    """(the Plotly JavaScript the book ships, why): the venv's cartesian bundle when it is installed and is the
    version the plotly package was built for, else plotly.min.js as the installed plotly package ships it, with
    the reason it fell back."""
    import sys

    import plotly

    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not full.is_file():
        raise FileNotFoundError(f"{full} is missing: reinstall plotly (pip install -e '.[book]')")
    cartesian = Path(sys.prefix) / CARTESIAN_JS
    if not cartesian.is_file():
        return full, f"{cartesian} is missing (`make js` installs it with npm; was npm missing or offline?)"
    have, want = _plotly_js_version(cartesian), _plotly_js_version(full)
    if have != want:
        return full, (f"{cartesian} is plotly.js {have}, the plotly package needs {want} "
                      "(set PLOTLY_JS in the Makefile to that version and run `make js`)")
    return cartesian, "the cartesian bundle"


def plotly_js_path() -> Path:
    """The Plotly JavaScript the book ships (``plotly_js_choice``)."""
    return plotly_js_choice()[0]


def plotly_js_name() -> str:
    """The name in _static: the bundle and its version, so a browser caches it across pages and fetches a new one."""
    path = plotly_js_path()
    kind = "plotly-cartesian" if path.name == "plotly-cartesian.min.js" else "plotly"
    return f"{kind}-{_plotly_js_version(path)}.min.js"


def _keep(js) -> bool:
    filename = getattr(js, "filename", None) or ""
    attributes = getattr(js, "attributes", {}) or {}
    if _EXTERNAL.match(filename) or filename.endswith("sphinx-thebe.js"):
        return False
    if attributes.get("type") in _DROPPED_TYPES:
        return False
    if "THEBE_JS_URL" in attributes.get("body", ""):
        return False
    return True


def _page_assets(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts is not None:
        seen, kept = set(), []
        for js in scripts:
            attributes = getattr(js, "attributes", {}) or {}
            key = (getattr(js, "filename", None) or "", repr(sorted(attributes.items())))  # None and "" alike
            if key not in seen and _keep(js):
                seen.add(key)
                kept.append(js)
        scripts[:] = kept
    css = context.get("css_files")
    if css is not None:
        css[:] = [c for c in css if not _EXTERNAL.match(getattr(c, "filename", "") or "")
                  and not (getattr(c, "filename", "") or "").startswith("sphinx-thebe")]
    body = context.get("body", "")
    if "text/x-thebe-config" in body:
        context["body"] = body = _THEBE_CONFIG.sub("", body)
    if "data-demo=" in body:  # a page with a static demo: Plotly, then the script that drives the demos
        app.add_js_file(plotly_js_name(), priority=600, loading_method="defer")
        app.add_js_file("static_demo.js", priority=601, loading_method="defer")


# what a page embeds for its download links: an exercise's notebook and the inputs.py its tests import
DOWNLOADS_EMBEDDED = (".ipynb", ".py")
_DOWNLOAD_HREF = re.compile(r'<a class="reference download internal"[^>]*href="((?:\.\./)*_downloads/([^"]+))"')


def _embed_downloads(app, pagename, templatename, context, doctree):
    """A page that offers notebooks (and an exercise's inputs.py) for download carries a copy of each (base64)
    and file_downloads.js, which saves that copy when the page was opened from disk: there browsers ignore a
    link's `download` attribute and show a notebook as raw JSON. Over http(s) the ordinary link is used."""
    body = context.get("body", "")
    links = _DOWNLOAD_HREF.findall(body)
    if not links:
        return
    sources = {dest: Path(app.srcdir) / name for name, (_docs, dest) in app.env.dlfiles.items()}
    files = {}
    for href, dest in links:
        source = sources.get(urllib.parse.unquote(dest))
        if source is not None and source.suffix in DOWNLOADS_EMBEDDED and source.is_file():
            files[href] = base64.b64encode(source.read_bytes()).decode("ascii")
    if files:
        data = json.dumps(files).replace("</", "<\\/")  # never closes the script element early
        context["body"] = body + f'<script type="application/json" id="bert-file-downloads">{data}</script>'
        app.add_js_file("file_downloads.js", priority=602, loading_method="defer")


REPOSITORY_MARKER = "@REPOSITORY_URL@"


# a line of a code block that holds the marker, keeping the block's opening tags when it is the first line
_MARKER_LINE = re.compile(r"(<pre>(?:<span></span>)?)?(?:(?!<pre>)[^\n])*" + re.escape(REPOSITORY_MARKER) + r"[^\n]*\n?")


def _repository_url_in_text(app, pagename, templatename, context, doctree):
    """The marker @REPOSITORY_URL@ (the landing page's `git clone` line) becomes `repository.url` from
    _config.yml; while that is empty, the line that holds it is left out (no placeholder URL in the page)."""
    body = context.get("body", "")
    if REPOSITORY_MARKER in body:
        url = (app.config.html_theme_options.get("repository_url") or "").strip()
        if url:
            context["body"] = body.replace(REPOSITORY_MARKER, html.escape(url))
        else:
            context["body"] = _MARKER_LINE.sub(lambda m: m.group(1) or "", body)


def _describe_figures(app, doctree, docname):
    """Every PNG figure of the page that carries a caption and alt text (course/plots.py writes them into the
    PNG when a chapter shows a figure) becomes a <figure>: the image with that alt text, then a <figcaption>.
    A translation's page serves the figure its edition carries inside the PNG (drawn in its language by the
    same execution, with its own alt text and caption); the page's PNG keeps neither the other edition nor the
    phone's version (that one is written beside it)."""
    from docutils import nodes

    from course.plots import plain_text, png_text, split_edition, split_narrow

    for k, image in enumerate(list(doctree.findall(nodes.image))):
        uri = image.get("uri", "")
        if not uri.endswith(".png") or "://" in uri:
            continue
        path = Path(app.srcdir) / uri.lstrip("/")
        if not path.is_file():
            continue
        original = path.read_bytes()
        data, other = split_edition(original)
        if other is not None and png_text(other).get("Language") == app.config.language:
            data = other  # the figure drawn in the page's language
        data, narrow = split_narrow(data)
        if narrow is not None:  # the phone's version beside the PNG; the PNG Sphinx copies into the page without it
            _narrow_path(path).write_bytes(narrow)
        if data != original:
            path.write_bytes(data)
        if _narrow_path(path).is_file():
            image["classes"].append(NARROW_CLASS)
        text = png_text(data)
        alt, caption = plain_text(text.get("Description", "").strip()), plain_text(text.get("Title", "").strip())
        if not alt:
            continue
        image["alt"] = alt
        if isinstance(image.parent, nodes.figure):
            continue
        figure = nodes.figure(classes=["course-figure"], ids=[f"course-figure-{k}"])  # the writer wants an id
        image.replace_self(figure)
        figure += image
        if caption:
            figure += nodes.caption(caption, caption)


NARROW_CLASS = "course-has-narrow"  # an <img> whose PNG has a phone's version
PHONE_MEDIA = "(max-width: 600px)"  # where the phone's version is shown: the width course.css's phone rules start at


def _narrow_path(path: Path) -> Path:
    return path.with_name(path.stem + ".narrow.png")


_IMG = re.compile(r"<img\b[^>]*>")


def _serve_narrow(app, pagename, templatename, context, doctree):
    """Every figure with a phone's version becomes a <picture> that serves it under ``PHONE_MEDIA``; both
    versions' smallest text is named on the <img>. The phone's PNG is copied beside the page's in _images."""
    from course.plots import png_text

    body = context.get("body", "")
    if "<img" not in body:
        return
    sources = {name: Path(app.srcdir) / src for src, name in getattr(app.builder, "images", {}).items()}
    images_dir = Path(app.outdir) / getattr(app.builder, "imagedir", "_images")

    def picture(m):
        tag = m.group(0)
        src = re.search(r'src="([^"]+)"', tag)
        source = None if src is None else sources.get(urllib.parse.unquote(src.group(1).rsplit("/", 1)[-1]))
        if source is None or source.suffix != ".png" or not source.is_file():
            return tag
        narrow = _narrow_path(source) if NARROW_CLASS in tag else None
        if narrow is not None and not narrow.is_file():
            narrow = None
        sizes = (png_text(source.read_bytes()).get("Text size", ""),
                 png_text(narrow.read_bytes()).get("Text size", "") if narrow else "")
        attributes = "".join(f' {key}="{html.escape(v)}"' for key, v in zip(("data-text-px", "data-narrow-text-px"), sizes) if v)
        if attributes and png_text(source.read_bytes()).get("Diagram") == "yes":
            attributes += ' data-diagram="yes"'  # one layout at every width: tapped on a phone, it opens at its size
        if not attributes:
            return tag  # not a figure a chapter drew
        img = f'{tag[:-2].rstrip() if tag.endswith("/>") else tag[:-1]}{attributes} />'
        if narrow is None:
            return img
        images_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(narrow, images_dir / narrow.name)
        srcset = src.group(1).rsplit("/", 1)[0] + "/" + narrow.name if "/" in src.group(1) else narrow.name
        return f'<picture><source media="{PHONE_MEDIA}" srcset="{html.escape(srcset)}">{img}</picture>'

    context["body"] = _IMG.sub(picture, body)


def _keep_edition(app, doctree, docname):
    """Each raw HTML output holds its own edition's text only (course/editions.py): the other editions' blocks go
    before the page, its search index and its size see them."""
    from docutils import nodes

    from course import editions

    for node in doctree.findall(nodes.raw):
        text = node.astext()
        if "<!--edition:" in text:
            node.children[:] = [nodes.Text(editions.keep(text, app.config.language))]
            node.rawsource = node.astext()


def _reexecuted_pages(app, env, added, changed, removed):
    """The pages whose notebook was executed (into Jupyter Book's cache, by course/build.py) after Sphinx last
    read them: read them again, or the page would keep the old outputs."""
    from course import build

    again = []
    for docname, read_at in env.all_docs.items():
        if docname in changed or docname in added:
            continue
        executed = build.executed_at(docname)
        read_at = read_at / 1e6 if read_at > 1e11 else read_at  # microseconds since the epoch (Sphinx >= 7.2)
        if executed is not None and executed > read_at:
            again.append(docname)
    return again


def _static_path(app, config):
    config.html_static_path = [*config.html_static_path, str(STATIC)]


# ------------------------------------------------------------------------------ the two editions (course/i18n.py)
UNTRANSLATED = "course-untranslated"


def _is_translation(config) -> bool:
    return (config.language or "en") not in ("en", "en_US")


def _language_switch_header(app, config):
    """The header's link to the other edition (course/_templates/language-switch.html), first in the article
    header's end, before the theme's buttons."""
    config.templates_path = [*config.templates_path, str(TEMPLATES)]
    options = config.html_theme_options
    end = options.get("article_header_end") or ["article-header-buttons.html"]
    end = [e.strip() for e in end.split(",")] if isinstance(end, str) else list(end)
    options["article_header_end"] = ["language-switch.html", *[e for e in end if e != "language-switch.html"]]


def _language_switch(app, pagename, templatename, context, doctree):
    """The same page in the other edition, as a relative link that works from disk: the English page
    chapters/x.html links to zh_CN/chapters/x.html, and back with ../ for each folder."""
    from course import i18n

    if app.builder.format != "html":
        return
    up, page = "../" * pagename.count("/"), app.builder.get_target_uri(pagename)
    if _is_translation(app.config):
        switch = {"href": f"../{up}{page}", "lang": "en", "label": "English", "title": "Read this page in English"}
    else:
        switch = {"href": f"{up}{i18n.LANGUAGE}/{page}", "lang": "zh-CN", "label": "中文", "title": "本页的中文版"}
    context["course_language_switch"] = switch
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{switch["lang"]}" href="{html.escape(switch["href"])}" />')
    body = context.get("body", "")
    if UNTRANSLATED in body:  # a paragraph left in English says so to a screen reader
        context["body"] = re.sub(r'(<[a-z][a-z0-9]*\b[^<>]*\bclass="[^"]*\b' + UNTRANSLATED + r'\b[^"]*")',
                                 r'\1 lang="en"', body)


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def _untranslated_transform():
    from docutils import nodes
    from sphinx.transforms import SphinxTransform
    from sphinx.util.nodes import extract_messages

    class MarkUntranslated(SphinxTransform):
        """After Sphinx's own translation (priority 20): each message of the page that has words to translate and
        no translation is marked, and the page's counts kept for translation_progress.json."""
        default_priority = 25

        def apply(self, **kwargs):
            from course import i18n

            if not _is_translation(self.config):
                return
            docname = self.env.docname
            catalogue = i18n.translations(docname)
            need = done = 0
            missing = []
            for node, msg in extract_messages(self.document):
                if any(isinstance(a, nodes.docinfo) or isinstance(a, nodes.field_list) and a.parent is self.document
                       or {"cell_output", "pasted-math", "pasted-text"} & set(a.get("classes", ()))
                       for a in _ancestors(node)):
                    # the page's front matter (jupytext's header), which no reader sees; a cell's output or a glued
                    # value (a formula a cell computed): not in the catalogue (their translation is a later phase)
                    continue
                if node.get("translated") or node.get("course_translated"):
                    need, done = need + 1, done + 1
                elif i18n.needs_translation(msg):
                    need += 1
                    if catalogue.get(msg) == msg:  # translated as itself (a name, a formula): Sphinx keeps the English
                        done += 1
                    else:
                        node.setdefault("classes", []).append(UNTRANSLATED)
                        missing.append(msg)
            progress = getattr(self.env, "course_translation", None)
            if progress is None:
                progress = self.env.course_translation = {}
            progress[docname] = {"messages": need, "translated": done, "untranslated": missing}

    class TranslateMathBlocks(SphinxTransform):
        """A formula's translation (the words in its \\text{}), before Sphinx's own pass (priority 20), which
        would wrap it in an rST literal block ("::") that MyST reads as text: the block's TeX is replaced as it is,
        and Sphinx's second pass skips the node as translated."""
        default_priority = 19

        def apply(self, **kwargs):
            from course import i18n

            if not _is_translation(self.config):
                return
            catalogue = i18n.translations(self.env.docname)
            for node, msg in extract_messages(self.document):
                if isinstance(node, nodes.math_block) and catalogue.get(msg, msg) != msg:
                    node[:] = [nodes.Text(catalogue[msg])]
                    node.rawsource = catalogue[msg]
                    node["translated"] = node["course_translated"] = True  # Sphinx's first pass resets the first

    class TranslateTocCaptions(SphinxTransform):
        """The table of contents' captions ("Chapters", "Reference"): sphinx-external-toc inserts the toctrees
        (priority 100) after Sphinx has translated the page (20), so they are translated here, from the page's
        catalogue, where `make locale` extracted them."""
        default_priority = 101

        def apply(self, **kwargs):
            from sphinx import addnodes

            from course import i18n

            if not _is_translation(self.config):
                return
            catalogue = i18n.translations(self.env.docname)
            for toctree in self.document.findall(addnodes.toctree):
                caption = toctree.get("caption")
                if caption and caption in catalogue:
                    toctree["caption"] = toctree["rawcaption"] = catalogue[caption]

    return TranslateMathBlocks, MarkUntranslated, TranslateTocCaptions


_PAGE_RENDERER: dict = {}  # {docname: the notebook renderer myst-nb made for that page}, the page being read only


def _glue_in_translations():
    """Glue references inside a translated message resolve to the page's own values. Sphinx parses a message's
    translation as a document of its own (its source ends in ":<translated>") with the page's parser, so myst-nb
    makes it a notebook of its own without the page's outputs, and a glue role there finds no data ("No key ...
    found in glue data"). A message is parsed as the Markdown it is (MyST's parser, which myst-nb's extends), the
    renderer each page's own parse made is kept, and a translated message's glue reference is looked up in its
    page's."""
    import myst_nb.sphinx_ as nb_sphinx
    from myst_nb.ext.glue import directives, roles, utils
    from myst_parser.parsers.sphinx_ import MystParser

    if getattr(utils.retrieve_glue_data, "course_patched", False):
        return
    load_renderer, parse, retrieve = nb_sphinx.load_renderer, nb_sphinx.Parser.parse, utils.retrieve_glue_data
    made: list = []

    def keeping(name):
        cls = load_renderer(name)

        def make(*args, **kwargs):
            made[:] = [cls(*args, **kwargs)]
            return made[0]

        return make

    def parse_keeping(self, inputstring, document):
        if "<translated>" in str(document.get("source", "")):
            # a message is Markdown, not a notebook: myst-nb's own parse (a notebook reader, an execution client
            # and a cache lookup per message) tripled the Chinese build's time
            return MystParser.parse(self, inputstring, document)
        parse(self, inputstring, document)
        if "<translated>" not in str(document.get("source", "")) and made:
            _PAGE_RENDERER.clear()
            _PAGE_RENDERER[document.settings.env.docname] = made[0]

    def retrieve_glue_data(document, key):
        try:
            return retrieve(document, key)
        except utils.RetrievalError:
            env = getattr(document.settings, "env", None)
            page = _PAGE_RENDERER.get(getattr(env, "docname", None))
            if page is None or "<translated>" not in str(document.get("source", "")):
                raise
            own = document.get("nb_renderer")
            document["nb_renderer"] = page
            try:
                return retrieve(document, key)
            finally:
                if own is None:
                    del document["nb_renderer"]
                else:
                    document["nb_renderer"] = own

    retrieve_glue_data.course_patched = True
    nb_sphinx.load_renderer = keeping
    nb_sphinx.Parser.parse = parse_keeping
    for module in (utils, roles, directives):
        module.retrieve_glue_data = retrieve_glue_data


GLUE_KEY = "course-glue-"  # a glued value's class names its key: course-glue-<role text> (tests/test_translation.py)


def _glue_keys_in_pages():
    """Every glued value carries its glue reference as a class, course-glue-<key> (with a role's format:
    course-glue-V:,), in both editions: tests/test_translation.py compares each key's value across them."""
    from docutils import nodes
    from myst_nb.ext.glue import directives, roles

    def tagged(made, key):
        if any(not isinstance(n, nodes.Element) for n in made):  # {glue:md} gives text nodes: one span around
            made = [nodes.inline("", "", *made)]
        for n in made:
            if not isinstance(n, (nodes.system_message, nodes.target)):
                n["classes"].append(GLUE_KEY + key)
        return made

    def role(run):
        def tagging(self):
            made, messages = run(self)
            return tagged(made, self.text), messages
        tagging.course_tagged = True
        return tagging

    def directive(run):
        def tagging(self):
            return tagged(run(self), self.arguments[0])
        tagging.course_tagged = True
        return tagging

    for cls in (roles.PasteRoleAny, roles.PasteTextRole, roles.PasteMarkdownRole):
        if not getattr(cls.run, "course_tagged", False):
            cls.run = role(cls.run)
    for cls in (directives.PasteAnyDirective, directives.PasteMarkdownDirective, directives.PasteMathDirective,
                directives.PasteFigureDirective):
        if not getattr(cls.run, "course_tagged", False):
            cls.run = directive(cls.run)


def _fast_message_documents(app, config):
    """In the Chinese build, MyST parses every translated message as a document of its own (about 1,800), and each
    parse built docutils' default settings afresh (myst_parser's ``setup_render`` evaluates
    ``options.get("document", make_document())``, its default argument, even when a document is given): half the
    time of the messages' parsing. The settings are built once per parser class and copied."""
    import copy
    import functools

    from myst_parser.mdit_to_docutils import base

    if not _is_translation(config) or getattr(base.make_document, "course_cached", False):
        return
    from docutils.frontend import get_default_settings
    from docutils.utils import new_document

    defaults = functools.lru_cache(maxsize=8)(get_default_settings)

    def make_document(source_path="notset", parser_cls=base.RSTParser):
        return new_document(source_path, settings=copy.copy(defaults(parser_cls)))

    make_document.course_cached = True
    base.make_document = make_document


def _purge_progress(app, env, docname):
    getattr(env, "course_translation", {}).pop(docname, None)


def _merge_progress(app, env, docnames, other):
    env.course_translation = {**getattr(env, "course_translation", {}),
                              **{d: v for d, v in getattr(other, "course_translation", {}).items() if d in docnames}}


def _write_progress(app, exception):
    from course import i18n

    if exception is None and _is_translation(app.config) and app.builder.format == "html":
        progress = {d: v for d, v in sorted(getattr(app.env, "course_translation", {}).items()) if d in app.env.all_docs}
        # beside the build's html folder: _build/zh_CN/translation_progress.json for make book's (i18n.PROGRESS)
        (Path(app.outdir).parent / i18n.PROGRESS.name).write_text(json.dumps(progress, indent=1) + "\n", encoding="utf-8")


def _repository_button(app, config):
    """The header's repository button follows `repository.url` in _config.yml, the one place to set it: shown
    when that holds a URL, absent when it is empty (jupyter-book itself refuses the button without a URL), so a
    copy of the course never links to a placeholder."""
    options = config.html_theme_options
    url = (options.get("repository_url") or "").strip()
    if url and not re.match(r"^https?://", url):
        raise ValueError(f"repository.url in _config.yml must be an http(s) URL, got {url!r}")
    options["use_repository_button"] = bool(url)


def _copy_plotly(app, exception):
    if exception is None and app.builder.format == "html":
        shutil.copyfile(plotly_js_path(), Path(app.outdir) / "_static" / plotly_js_name())


def _say_which_plotly(app):
    """The build's output says plainly when the book ships plotly's full bundle, and why."""
    from sphinx.util import logging
    from sphinx.util.console import bold, red

    path, why = plotly_js_choice()
    logger = logging.getLogger(__name__)
    if path.name == "plotly-cartesian.min.js":
        logger.info(f"course: the demos use plotly's cartesian bundle ({path.stat().st_size / 1e6:.1f} MB)")
    else:
        logger.info(red(bold(f"course: FELL BACK to plotly's full bundle ({path.stat().st_size / 1e6:.1f} MB, every "
                             f"demo page heavier than the README's 6 MB): {why}")))


def _extension_version() -> str:
    """A hash of this extension, its static files and course/plots.py's figure descriptions: when one changes,
    Sphinx reads every page again (the figures, scripts and styles of every page depend on them)."""
    import hashlib

    h = hashlib.sha256()
    for f in [Path(__file__), Path(__file__).with_name("plots.py"), Path(__file__).with_name("i18n.py"),
              *sorted(STATIC.iterdir()), *sorted(TEMPLATES.iterdir())]:
        if f.is_file():
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def setup(app):
    # The Plotly file every demo page names: a config value, so that when it changes (make js installed the
    # cartesian bundle, or plotly was upgraded) Sphinx rewrites every page instead of leaving old names behind.
    app.add_config_value("course_plotly_js", plotly_js_name(), "html")
    app.add_config_value("course_ext_version", _extension_version(), "env")
    app.connect("builder-inited", _say_which_plotly)
    app.connect("doctree-resolved", _describe_figures)
    app.connect("doctree-resolved", _keep_edition)
    app.connect("config-inited", _static_path)
    app.connect("config-inited", _repository_button)
    app.connect("config-inited", _language_switch_header)
    app.connect("config-inited", _fast_message_documents)
    for transform in _untranslated_transform():
        app.add_transform(transform)
    _glue_in_translations()
    _glue_keys_in_pages()
    app.connect("env-purge-doc", _purge_progress)
    app.connect("env-merge-info", _merge_progress)
    app.connect("build-finished", _write_progress)
    app.connect("html-page-context", _language_switch, priority=100)
    # Late (priority > 500): myst-nb adds a page's widget scripts in its own html-page-context handler (500).
    # No handler before this one returns a template name (which would stop the event).
    app.connect("html-page-context", _page_assets, priority=900)
    app.connect("html-page-context", _embed_downloads, priority=100)
    app.connect("html-page-context", _repository_url_in_text, priority=100)
    app.connect("html-page-context", _serve_narrow, priority=100)
    app.connect("env-get-outdated", _reexecuted_pages)
    app.connect("build-finished", _copy_plotly)
    app.add_css_file("course.css", priority=900)
    app.add_css_file("i18n.css", priority=901)
    app.add_css_file("print.css", priority=902, media="print")  # paper: no chrome, nothing cut (course/pdf.py prints with it)
    app.add_js_file("page.js", priority=900, loading_method="defer")
    # after the page's MathJax configuration (Sphinx adds it at 500) and before MathJax runs (deferred): its
    # smallest script size, 9 px (issue 30 section 5)
    app.add_js_file("math_setup.js", priority=501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
