"""Conceptual drawings, one per chapter: the picture a reader should hold before the chapter's formula.

Each drawing is SVG written by the functions below (no third-party code or artwork), shown inline in the page
(``show(name)`` in a ``remove-input`` cell), so it scales with the column, keeps its text sharp on a phone,
and draws its lines and words in the page's own text colour (``currentColor``): the same drawing reads in the
light and the dark theme. Each one carries its alt text (SVG ``<title>`` and ``<desc>``, named by
``aria-labelledby``) and a caption. The numbers a drawing shows come from bertlib (its configurations, the
masking defaults), never typed here.

    from course import drawings
    drawings.show("encoder_layer")
"""
from __future__ import annotations

import hashlib
import html
import inspect
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

from course.plots import CATALOGUE, COLORS, READABLE_PX, Edition, _letters

_ids = itertools.count()
FONT = 15  # px in the drawing's own units; drawings are at most WIDTH wide, so a phone shrinks text at most ~0.75x
WIDTH = 480
# The width a drawing gets on a 390-px phone (the article's column less the output's padding; tests/test_pages.py
# measures every label there), and the smallest words a drawing may hold: READABLE_PX once shrunk to it (13 units,
# 9.3 px; the 12-unit labels drawn before were 8.55 px, issue 30 section 5).
PHONE_PX = 342
SMALL = math.ceil(READABLE_PX * WIDTH / PHONE_PX)
# What drew a drawing: this module. Each SVG names it (data-drawings), and course/build.py executes a chapter again
# whose stored drawings carry another version, as it does for course/plots.py's figures.
# (and its catalogue: the Chinese words are drawn when the chapter executes)
WORDS = CATALOGUE.with_name("drawings.po")
DRAWINGS_VERSION = hashlib.sha256(Path(__file__).read_bytes()
                                  + (WORDS.read_bytes() if WORDS.is_file() else b"")).hexdigest()[:12]


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class Drawing:
    """An SVG canvas of ``width`` x ``height`` units with its accessible name (``title``), its longer
    description (``desc``, what the picture shows, for a reader who cannot see it) and a visible caption."""

    width: int
    height: int
    title: str
    desc: str
    caption: str
    parts: list[str] = field(default_factory=list)
    edition: Edition = field(default_factory=lambda: Edition("en"))

    def speak(self, language: str) -> None:
        """Draw the words that follow in ``language`` (course/plots.py's ``Edition``: the code catalogue
        locale/zh_CN/LC_MESSAGES/outputs/drawings.po, templates with ``{fields}`` for the numbers bertlib gives),
        the title, description and caption given already included."""
        self.edition = Edition(language)
        self.title, self.desc, self.caption = (self.edition.words(t) for t in (self.title, self.desc, self.caption))

    def box(self, x, y, w, h, label="", color=None, sub="", size=FONT, bold=False, dashed=False, rx=6, keep=False):
        """A rounded box, tinted with ``color`` (one of course.plots.COLORS' names or a hex colour), its label
        centred (and a smaller second line ``sub``); ``keep``: the label is the example's own text (a token)."""
        stroke = COLORS.get(color, color) if color else "currentColor"
        fill = f'fill="{stroke}" fill-opacity="0.16"' if color else 'fill="none"'
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        self.parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{rx}" {fill} '
                          f'stroke="{stroke}" stroke-width="1.6"{dash}/>')
        if label and sub:
            self.text(x + w / 2, y + h / 2 - 3, label, size=size, bold=bold, keep=keep)
            self.text(x + w / 2, y + h / 2 + size - 1, sub, size=max(SMALL, size - 3), muted=True)
        elif label:
            self.text(x + w / 2, y + h / 2 + size * 0.35, label, size=size, bold=bold, keep=keep)

    def text(self, x, y, s, size=FONT, anchor="middle", bold=False, muted=False, italic=False, color=None, keep=False):
        """Words at (x, y), in the drawing's language unless ``keep`` (an example's own text: a token, a sentence
        the model reads)."""
        s = str(s) if keep else self.edition.words(str(s))
        weight = ' font-weight="600"' if bold else ""
        style = ' font-style="italic"' if italic else ""
        # Words are always in the page's text colour (readable in both themes, whatever the contrast of the
        # palette's tints); ``color`` marks them with a small square of that colour before them instead.
        if color:
            c = COLORS.get(color, color)
            left = x - {"start": 0, "middle": _letters(s) * size * 0.29, "end": _letters(s) * size * 0.58}[anchor]
            self.parts.append(f'<rect x="{left - size * 0.75:.1f}" y="{y - size * 0.62:.1f}" width="{size * 0.5:.1f}" '
                              f'height="{size * 0.5:.1f}" fill="{c}"/>')
        fill = "currentColor"
        opacity = ' fill-opacity="0.75"' if muted else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                          f'fill="{fill}"{opacity}{weight}{style}>{_esc(s)}</text>')

    def _head(self, x, y, angle, color):
        a, s = 0.45, 8
        p1 = (x - s * math.cos(angle - a), y - s * math.sin(angle - a))
        p2 = (x - s * math.cos(angle + a), y - s * math.sin(angle + a))
        self.parts.append(f'<polygon points="{x:.1f},{y:.1f} {p1[0]:.1f},{p1[1]:.1f} {p2[0]:.1f},{p2[1]:.1f}" '
                          f'fill="{color}"/>')

    def arrow(self, x1, y1, x2, y2, color=None, dashed=False, width=1.6):
        """A straight arrow from (x1, y1) to (x2, y2)."""
        c = COLORS.get(color, color) if color else "currentColor"
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        angle = math.atan2(y2 - y1, x2 - x1)
        end = (x2 - 6 * math.cos(angle), y2 - 6 * math.sin(angle))  # the line stops inside the head
        self.parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{end[0]:.1f}" y2="{end[1]:.1f}" stroke="{c}" '
                          f'stroke-width="{width}"{dash}/>')
        self._head(x2, y2, angle, c)

    def curve(self, x1, y1, x2, y2, lift, color=None):
        """An arrow arching ``lift`` units above the straight line (negative: below)."""
        c = COLORS.get(color, color) if color else "currentColor"
        cx, cy = (x1 + x2) / 2, min(y1, y2) - lift
        self.parts.append(f'<path d="M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}" fill="none" '
                          f'stroke="{c}" stroke-width="1.6"/>')
        self._head(x2, y2, math.atan2(y2 - cy, x2 - cx), c)

    def path(self, d, color=None, dashed=False):
        c = COLORS.get(color, color) if color else "currentColor"
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        self.parts.append(f'<path d="{d}" fill="none" stroke="{c}" stroke-width="1.6"{dash}/>')

    def svg(self) -> str:
        n = next(_ids)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" role="img" '
                f'aria-labelledby="drawing-{n}-title drawing-{n}-desc" class="bert-drawing" data-drawings="{DRAWINGS_VERSION}" '
                f'style="width:100%;max-width:{self.width}px;height:auto;display:block;margin:0 auto;'
                f'font-family:inherit">'
                f'<title id="drawing-{n}-title">{_esc(self.title)}</title>'
                f'<desc id="drawing-{n}-desc">{_esc(self.desc)}</desc>' + "".join(self.parts) + "</svg>")

    def html(self) -> str:
        """The drawing and its caption, as one figure."""
        return (f'<figure class="bert-drawing-figure" style="margin:1em 0">{self.svg()}'
                f'<figcaption style="text-align:center;font-size:0.9em;margin-top:0.4em">{_esc(self.caption)}'
                f'</figcaption></figure>')


def _row(d: Drawing, tokens, x0, y, w, h, gap, colors=None, bold=()):
    """Boxes for ``tokens`` left to right; returns their centres' x."""
    centres = []
    for i, tok in enumerate(tokens):
        x = x0 + i * (w + gap)
        d.box(x, y, w, h, tok, color=(colors[i] if colors else None), bold=i in bold, size=FONT - 1, keep=True)
        centres.append(x + w / 2)
    return centres


# --------------------------------------------------------------------------------------------- drawings
def visibility(language: str = "en") -> Drawing:
    """Chapter 1: which words one position may read, left to right against both directions."""
    words = ["the", "bank", "of", "the", "river"]
    d = Drawing(WIDTH, 300, "What the word 'bank' may read, in a left-to-right model and in BERT",
                "Two rows of the five words 'the bank of the river'. Top row, left to right (GPT): a single "
                "arrow reaches 'bank' from 'the' before it. Bottom row, BERT: arrows reach 'bank' from all four "
                "other words, 'river' included.",
                "Left to right, 'bank' reads only the words before it; in BERT it reads the whole sentence, so "
                "'river' can say which bank is meant.")
    d.speak(language)
    for top, label, color, seen in ((20, "left to right (GPT)", "gpt", [0]), (165, "both directions (BERT)", "bert",
                                                                            [0, 2, 3, 4])):
        d.text(20, top + 14, label, anchor="start", bold=True, color=color)
        xs = _row(d, words, 20, top + 85, 80, 38, 10, colors=[color if i == 1 else None for i in range(5)], bold=(1,))
        for i in seen:
            d.curve(xs[i], top + 85, xs[1] + (i - 1) * 4, top + 85, lift=18 + 12 * abs(i - 1), color=color)
    return d


def encoder_layer(language: str = "en") -> Drawing:
    """Chapter 2: one post-LN encoder layer, bottom to top, with its two residual paths."""
    d = Drawing(WIDTH, 440, "One BERT encoder layer",
                "From the bottom: the input, T vectors of width H, goes into multi-head self-attention; the "
                "attention's output is added to the input (a residual path drawn on the right) and LayerNorm "
                "follows. That goes into the feed-forward network (H to I, GELU, I back to H); its output is "
                "added to its own input (a second residual path) and LayerNorm follows again. Out come T "
                "vectors of width H, ready for the next layer.",
                "One encoder layer: attention lets each position read the others, the feed-forward network "
                "works on each position alone; each sub-layer adds its result to its input and normalises "
                "(post-LN, as in BERT).")
    d.speak(language)
    x, w = 90, 260
    d.text(x + w / 2, 428, "input: T vectors of width H", muted=True)
    d.arrow(x + w / 2, 412, x + w / 2, 372)
    d.box(x, 330, w, 42, "multi-head self-attention", color="bert")
    d.arrow(x + w / 2, 330, x + w / 2, 300)
    d.box(x, 262, w, 38, "add, then LayerNorm", color="layernorm")
    d.arrow(x + w / 2, 262, x + w / 2, 224)
    d.box(x, 170, w, 54, "feed-forward network", color="encoder", sub="H → I, GELU, I → H, each position alone")
    d.arrow(x + w / 2, 170, x + w / 2, 140)
    d.box(x, 102, w, 38, "add, then LayerNorm", color="layernorm")
    d.arrow(x + w / 2, 102, x + w / 2, 50)
    d.text(x + w / 2, 36, "output: T vectors of width H, to the next layer", muted=True)
    for bottom, top in ((395, 281), (246, 121)):  # the residual paths, on the right
        d.path(f"M{x + w / 2},{bottom} H{x + w + 40} V{top}")
        d.arrow(x + w + 40, top, x + w + 2, top)
    d.text(x + w + 46, 340, "residual", anchor="start", size=FONT - 2, muted=True)
    d.text(x + w + 46, 190, "residual", anchor="start", size=FONT - 2, muted=True)
    return d


def sizes(language: str = "en") -> Drawing:
    """Chapter 3: BERT-Base and BERT-Large as stacks of layers, depth L and width H to scale."""
    from bertlib import BertConfig

    base, large = BertConfig.base(), BertConfig.large()
    d = Drawing(WIDTH, 330, "BERT-Base and BERT-Large as stacks of layers",
                f"Two stacks of bars. BERT-Base: {base.num_hidden_layers} bars, each {base.hidden_size} units wide, "
                f"with {base.num_attention_heads} heads. BERT-Large: {large.num_hidden_layers} bars, each "
                f"{large.hidden_size} wide, with {large.num_attention_heads} heads. Widths and counts are to scale.",
                "The two sizes differ only in depth L, width H and the number of heads A; the layer is the same.")
    d.speak(language)
    unit = 180 / large.hidden_size
    for x0, name, cfg in ((30, "BERT-Base", base), (255, "BERT-Large", large)):
        w, bar = cfg.hidden_size * unit, 260 / large.num_hidden_layers
        left = x0 + (200 - w) / 2
        for i in range(cfg.num_hidden_layers):
            y = 280 - (i + 1) * bar
            d.parts.append(f'<rect x="{left:.1f}" y="{y + 1:.1f}" width="{w:.1f}" height="{bar - 2:.1f}" rx="2" '
                           f'fill="{COLORS["encoder"]}" fill-opacity="0.45"/>')
        d.text(x0 + 100, 302, name, bold=True)
        d.text(x0 + 100, 322, f"L = {cfg.num_hidden_layers}, H = {cfg.hidden_size}, A = {cfg.num_attention_heads}",
               size=FONT - 2, muted=True)
    return d


def embeddings(language: str = "en") -> Drawing:
    """Chapter 4: the input vector of each position is the sum of three looked-up vectors."""
    tokens = ["[CLS]", "my", "dog", "[SEP]"]
    d = Drawing(WIDTH, 330, "A position's input is the sum of three embeddings",
                "Four positions: [CLS], my, dog, [SEP]. Under each, three boxes are stacked and added: its token "
                "embedding, its segment embedding (A for all four), its position embedding (0, 1, 2, 3). The sum "
                "goes through LayerNorm and dropout before the first encoder layer.",
                "Token, segment and position embeddings are looked up in three tables and added, then normalised: "
                "one vector of width H per position.")
    d.speak(language)
    w, gap, x0 = 86, 14, 80
    for i, tok in enumerate(tokens):
        x = x0 + i * (w + gap)
        d.text(x + w / 2, 24, tok, bold=True, keep=True)
        d.box(x, 38, w, 34, f"E[{tok}]", color="token", size=FONT - 2, keep=True)
        d.text(x + w / 2, 90, "+", size=FONT + 2)
        d.box(x, 98, w, 34, "E_A", color="segment", size=FONT - 2)
        d.text(x + w / 2, 150, "+", size=FONT + 2)
        d.box(x, 158, w, 34, f"P_{i}", color="position", size=FONT - 2)
        d.arrow(x + w / 2, 194, x + w / 2, 226)
    for y, label, color in ((55, "token", "token"), (115, "segment", "segment"), (175, "position", "position")):
        d.text(x0 - 6, y + 5, label, anchor="end", size=FONT - 2, color=color)
    d.box(x0, 228, 4 * w + 3 * gap, 36, "sum → LayerNorm → dropout", color="sum")
    d.arrow(x0 + 2 * w + 1.5 * gap, 264, x0 + 2 * w + 1.5 * gap, 300)
    d.text(x0 + 2 * w + 1.5 * gap, 320, "to encoder layer 1", muted=True)
    return d


def input_layout(language: str = "en") -> Drawing:
    """Chapter 5: a sentence pair as BERT reads it: [CLS] A [SEP] B [SEP], with its three id rows."""
    tokens = ["[CLS]", "dogs", "bark", "[SEP]", "cats", "purr", "[SEP]"]
    segments = [0, 0, 0, 0, 1, 1, 1]
    d = Drawing(WIDTH, 222, "A sentence pair laid out for BERT",
                "Seven boxes: [CLS], dogs, bark, [SEP], cats, purr, [SEP]. Below them, token_type_ids: 0 for the "
                "first four, 1 for the last three; position_ids 0 to 6. An arrow from [CLS] notes that its output "
                "is read for sentence-level tasks.",
                "[CLS] opens every input and its output stands for the whole pair; [SEP] closes each sentence; "
                "token_type_ids say which sentence a position belongs to.")
    d.speak(language)
    w, gap, x0 = 52, 5, 82
    colors = ["pooler"] + [None] * 2 + ["pad"] + [None] * 2 + ["pad"]
    xs = _row(d, tokens, x0, 70, w, 38, gap, colors=colors)
    d.text(x0 - 8, 95, "tokens", anchor="end", size=SMALL)
    for row, (label, values) in enumerate((("token_type", segments), ("position", range(7)))):
        y = 140 + row * 34
        d.text(x0 - 8, y, label, anchor="end", size=SMALL)
        for x, v in zip(xs, values):
            d.text(x, y, str(v), bold=row == 0)
    d.path(f"M{xs[0]},{68} V{40} H{xs[0] + 40}", color="pooler")
    d.text(xs[0] + 46, 45, "its output stands for the whole pair", anchor="start", size=FONT - 2)
    d.text((xs[0] + xs[3]) / 2, 208, "sentence A", muted=True)
    d.text((xs[4] + xs[6]) / 2, 208, "sentence B", muted=True, color="segment")
    return d


def padding_mask(language: str = "en") -> Drawing:
    """Chapter 6: two sentences in one batch: the shorter one is padded, and the mask hides the padding."""
    rows = [["[CLS]", "hi", "[SEP]", "[PAD]", "[PAD]"], ["[CLS]", "a", "dog", "ran", "[SEP]"]]
    d = Drawing(WIDTH, 270, "Padding and the attention mask",
                "A batch of two rows of five positions. Row 1: [CLS] hi [SEP] then two [PAD]; its attention_mask "
                "is 1 1 1 0 0. Row 2: [CLS] a dog ran [SEP]; its mask is 1 1 1 1 1. The positions with mask 0 get "
                "minus infinity added to their attention scores, so no position attends to them.",
                "Rows of a batch must have one length, so short rows are padded; attention_mask (1: real, 0: "
                "padding) keeps every position from attending to the padding.")
    d.speak(language)
    w, gap, x0 = 64, 8, 110
    for r, tokens in enumerate(rows):
        y = 30 + r * 110
        d.text(x0 - 10, y + 25, f"row {r + 1}", anchor="end", size=FONT - 2, bold=True)
        xs = _row(d, tokens, x0, y, w, 38, gap, colors=["pad" if t == "[PAD]" else "bert" for t in tokens])
        d.text(x0 - 10, y + 64, "mask", anchor="end", size=SMALL)
        for x, t in zip(xs, tokens):
            d.text(x, y + 64, "0" if t == "[PAD]" else "1", bold=t == "[PAD]")
    d.text(WIDTH / 2, 258, "mask 0 → score + (−∞) → attention weight exactly 0", muted=True)
    return d


def mlm(language: str = "en") -> Drawing:
    """Chapter 7: the masked language model is graded only at the hidden position."""
    tokens = ["[CLS]", "my", "dog", "is", "[MASK]", "[SEP]"]
    d = Drawing(WIDTH, 300, "Masked language modelling: graded only where a word was hidden",
                "Bottom: the input [CLS] my dog is [MASK] [SEP]. Above it the model, then a prediction at every "
                "position. The labels row is -100 everywhere except under [MASK], where it is 'cute': only that "
                "position's prediction enters the loss.",
                "The model predicts a word at every position, but the labels are -100 (ignored) everywhere except "
                "where a word was hidden: the loss is the mean over the selected positions only.")
    d.speak(language)
    w, gap, x0 = 66, 6, 22
    xs = _row(d, tokens, x0, 232, w, 36, gap, colors=[None] * 4 + ["heads", None])
    d.box(x0, 150, 6 * w + 5 * gap, 40, "BERT + MLM head", color="encoder")
    for x in xs:
        d.arrow(x, 232, x, 192)
        d.arrow(x, 150, x, 118, color="heads" if x == xs[4] else None)
    for i, x in enumerate(xs):
        d.box(x - w / 2, 80, w, 36, "cute?" if i == 4 else "p(·)", color="heads" if i == 4 else None, dashed=i != 4,
              size=FONT - 2, keep=True)
        d.text(x, 58, "cute" if i == 4 else "-100", bold=i == 4, muted=i != 4, keep=True)
    d.text(x0, 26, "labels: only the hidden position is graded", anchor="start", size=FONT - 1)
    return d


def masking_split(language: str = "en") -> Drawing:
    """Chapter 8: how positions are chosen and what is put in their place (bertlib's defaults)."""
    select, mask, rand = _masking_defaults()
    keep = 1 - mask - rand
    pct = lambda v: f"{v:.0%}"  # noqa: E731
    d = Drawing(WIDTH, 280, "Which positions are selected, and what replaces them",
                f"A tree. Of the eligible positions, {pct(select)} are selected and get a label; {pct(1 - select)} "
                f"are left alone with no label. Of the selected: {pct(mask)} become [MASK], {pct(rand)} a random "
                f"word, {pct(keep)} stay unchanged; all three are graded against the original word.",
                f"{pct(select)} of the positions are selected; of those {pct(mask)} are masked, {pct(rand)} replaced "
                f"by a random word and {pct(keep)} left as they are, so the model cannot tell which words to check.")
    d.speak(language)
    d.box(150, 14, 180, 40, "eligible positions")
    d.arrow(200, 54, 110, 102)
    d.arrow(280, 54, 370, 102)
    d.text(138, 82, pct(select), anchor="end", bold=True)
    d.text(342, 82, pct(1 - select), anchor="start", bold=True)
    d.box(30, 104, 160, 46, "selected", color="heads", sub="labelled, graded")
    d.box(290, 104, 160, 46, "not selected", color="pad", sub="label -100")
    for x, label, share, color in ((20, "[MASK]", mask, "heads"), (170, "random word", rand, "gpt"),
                                   (320, "unchanged", keep, "segment")):
        d.arrow(110, 150, x + 70, 210, color=color)
        d.box(x, 212, 140, 44, label, color=color, sub=pct(share) + " of selected")
    return d


def nsp(language: str = "en") -> Drawing:
    """Chapter 9: next-sentence prediction: half the pairs are real continuations, half random."""
    d = Drawing(WIDTH, 290, "Next-sentence prediction",
                "Sentence A, 'the man went to the store', is paired either with the sentence that followed it, "
                "'he bought a gallon of milk' (label IsNext, half the pairs), or with a random sentence from "
                "another document, 'penguins are flightless birds' (label NotNext, the other half). The [CLS] "
                "output of the pair goes to a classifier with two outputs.",
                "Half the pairs are a sentence and its real successor, half a sentence and a random one; the "
                "classifier on [CLS] says which.")
    d.speak(language)
    d.box(20, 20, 440, 38, "A: the man went to the store", color="bert", keep=True)
    d.arrow(150, 58, 110, 96)
    d.arrow(330, 58, 370, 96)
    d.text(118, 80, "half", anchor="end", bold=True)
    d.text(362, 80, "half", anchor="start", bold=True)
    d.box(20, 98, 210, 54, "B: he bought milk", color="segment", sub="the next sentence", keep=True)
    d.box(250, 98, 210, 54, "B: penguins can't fly", color="gpt", sub="a random sentence", keep=True)
    d.text(125, 176, "IsNext", bold=True, color="segment")
    d.text(355, 176, "NotNext", bold=True, color="gpt")
    d.box(100, 200, 280, 36, "[CLS] A [SEP] B [SEP] → BERT", color="encoder")
    d.arrow(240, 236, 240, 254)
    d.box(150, 254, 180, 30, "[CLS] → 2 logits", color="pooler", size=FONT - 1)
    return d


def finetuning(language: str = "en") -> Drawing:
    """Chapter 10: one pretrained encoder, a small new head per task."""
    d = Drawing(WIDTH, 270, "Fine-tuning: one pretrained encoder, a new head per task",
                "A wide box, the pretrained encoder, with three small heads above it: a sentence or pair classifier "
                "reading the [CLS] output, a token tagger reading every position, and a span head giving each "
                "position a start and an end score. Only the heads are new; every weight is trained on the task.",
                "Each task adds only a small head on top of the pretrained encoder; the whole model is then trained "
                "on the task's labels for a few epochs.")
    d.speak(language)
    d.box(20, 170, 440, 46, "pretrained BERT encoder", color="encoder", sub="weights from pretraining")
    d.text(240, 246, "input: [CLS] tokens [SEP] (tokens [SEP])", muted=True)
    heads = ((20, "classifier", "[CLS] → labels"), (170, "token tagger", "each token → tag"),
             (320, "span head", "start, end scores"))
    for x, name, sub in heads:
        d.box(x, 60, 140, 56, name, color="heads", sub=sub)
        d.arrow(x + 70, 168, x + 70, 118, color="heads")
    d.text(240, 36, "one small new head per task", bold=True)
    return d


def _masking_defaults() -> tuple[float, float, float]:
    """bertlib's mask_tokens defaults: (selected, [MASK], random word) shares."""
    from bertlib import mask_tokens

    p = inspect.signature(mask_tokens).parameters
    return tuple(p[k].default for k in ("mlm_probability", "mask_replace_prob", "random_replace_prob"))


def _masking_words() -> str:
    select, mask, rand = _masking_defaults()
    return f"{select:.0%}, then {mask:.0%}/{rand:.0%}/{1 - mask - rand:.0%}"


def pretraining_loop(language: str = "en") -> Drawing:
    """Chapter 11: the pretraining step, from text to an optimizer update."""
    d = Drawing(WIDTH, 400, "One step of BERT's pretraining, from documents to a weight update",
                "A loop from top to bottom: documents are cut into sentence pairs (half real next sentences); the "
                "pairs are tokenized and masked; the model predicts the masked words and IsNext; the MLM and NSP "
                "losses are added; backpropagation, gradient clipping and an AdamW step with the learning-rate "
                "schedule update the weights; the next batch follows.",
                "One step of pretraining: a batch of masked sentence pairs in, two losses added, one optimizer "
                "update out; repeated for every batch.")
    d.speak(language)
    steps = [("documents", "", None), ("sentence pairs", "half real next, half random", "segment"),
             ("tokenize and mask", _masking_words(), "heads"), ("BertForPreTraining", "MLM and NSP heads", "encoder"),
             ("loss = MLM + NSP", "", "gpt"), ("backward, clip, AdamW step", "warm-up, then linear decay", "sum")]
    y = 12
    for i, (name, sub, color) in enumerate(steps):
        d.box(100, y, 280, 50 if sub else 40, name, color=color, sub=sub)
        bottom = y + (50 if sub else 40)
        if i < len(steps) - 1:
            d.arrow(240, bottom, 240, bottom + 16)
        y = bottom + 16
    d.path(f"M380,{y - 41} H420 V{87} H392")
    d.arrow(400, 87, 382, 87)
    d.text(426, 226, "next", anchor="start", size=SMALL, muted=True)
    d.text(426, 242, "batch", anchor="start", size=SMALL, muted=True)
    return d


def _confidence() -> float:
    """The experiments' compare(): its default confidence."""
    from course import runs  # noqa: F401  (puts the repository on sys.path for projects/)
    from projects.pretraining_experiments.experiments import compare

    return inspect.signature(compare).parameters["confidence"].default


def seed_verdict(language: str = "en") -> Drawing:
    """Chapter 12: from runs over several seeds to the sentence a page may write."""
    conf = f"{_confidence():.0%}"
    d = Drawing(WIDTH, 420, "From runs over several seeds to a verdict on two recipes",
                "Three boxes, seed 0, seed 1 and seed 2, each training recipe A and recipe B with that seed. "
                "Arrows lead to one box, the differences a minus b, one per seed, and then to a box with their mean "
                f"and its {conf} interval from Student's t. Below, three number lines with zero marked: an interval "
                "wholly right of zero reads 'A larger', one wholly left of zero 'A smaller', and one that spans zero "
                "'no difference we can see'.",
                "A claim is tested by training both recipes with the same seeds: each seed gives one difference, "
                "and the interval over those differences, not one run, chooses the sentence.")
    d.speak(language)
    for i in range(3):
        x = 20 + i * 150
        d.box(x, 12, 140, 50, f"seed {i}", color="segment", sub="train A, train B")
        d.arrow(x + 70, 62, 240 + (i - 1) * 60, 92)
    d.box(40, 92, 400, 48, "differences: a − b, one per seed", color="sum", sub="paired: same seed, same data")
    d.arrow(240, 140, 240, 162)
    d.box(40, 162, 400, 48, f"mean difference, {conf} interval", color="heads", sub="mean ± t · spread / √seeds")
    d.arrow(240, 210, 240, 236)
    zero = 150
    d.text(20, 250, "the interval (dot: the mean) against zero", anchor="start", size=SMALL, muted=True)
    for k, (low, high, words) in enumerate(((180, 270, "above 0: larger"), (40, 125, "below 0: smaller"),
                                           (105, 215, "spans 0: no difference"))):
        y = 284 + 52 * k
        d.path(f"M20,{y} H280")
        d.path(f"M{zero},{y - 22} V{y + 4}", dashed=True)
        d.text(zero, y + 17, "0", size=SMALL, muted=True)
        c = COLORS["bert" if k == 0 else "gpt" if k == 1 else "pad"]
        d.parts.append(f'<line x1="{low}" y1="{y - 12}" x2="{high}" y2="{y - 12}" stroke="{c}" stroke-width="5" '
                       f'stroke-linecap="round"/><circle cx="{(low + high) / 2}" cy="{y - 12}" r="5" fill="currentColor"/>')
        d.text(296, y + 5, words, anchor="start", size=FONT - 1)
    return d


DRAWINGS = {f.__name__: f for f in (visibility, encoder_layer, sizes, embeddings, input_layout, padding_mask, mlm,
                                    masking_split, nsp, finetuning, pretraining_loop, seed_verdict)}


def show(name: str):
    """Display drawing ``name`` (one of DRAWINGS) in the page as an inline figure with its caption."""
    from IPython.display import HTML, display

    from course.editions import both

    if name not in DRAWINGS:
        raise KeyError(f"no drawing {name!r}; there are: {', '.join(DRAWINGS)}")
    display(HTML(both(lambda language: DRAWINGS[name](language).html())))  # each edition's page keeps its own
