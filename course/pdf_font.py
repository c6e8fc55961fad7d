"""The Chinese edition's font for its PDF: Noto Sans CJK SC (Debian's fonts-noto-cjk), as a TrueType subset.

Chromium's PDF writer (Skia) embeds TrueType fonts as fonts, but draws a font with CFF outlines, as every Noto CJK
face is, as Type 3 glyph pictures: nameless, one small font per few glyphs (3,351 in the first Chinese PDF, 12 MB),
and their text maps some characters to look-alikes (力 came out as the Kangxi radical ⼒, so a search for 注意力
found nothing). So course/pdf.py gives the Chinese pages this font instead, for the CJK characters only:
the SC face taken out of the collection, cut to the characters the edition's pages hold, its cubic outlines
turned into TrueType's quadratic ones (fontTools' cu2qu, within 1 unit of the 1000-unit em: the same shapes).
Chromium then embeds it as `NotoSansCJKsc-Regular`/`-Bold`, subset again to the glyphs each page uses.

Made once per set of characters and kept in _build/pdf/fonts (a few seconds).
"""
from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

NOTO = Path("/usr/share/fonts/opentype/noto")
FACE = "Noto Sans CJK SC"
WEIGHTS = {400: "NotoSansCJK-Regular.ttc", 700: "NotoSansCJK-Bold.ttc"}
# The blocks the font is used for: CJK radicals, punctuation, kana, ideographs, compatibility forms, full-width forms
UNICODE_RANGE = "U+2E80-2FFF, U+3000-30FF, U+3400-4DBF, U+4E00-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF"
_RANGES = [(0x2E80, 0x2FFF), (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
           (0xFE30, 0xFE4F), (0xFF00, 0xFFEF)]
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")  # a demo's states are JSON in the page, its text \u-escaped


class FontMissing(RuntimeError):
    pass


def cjk(ch: str) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in _RANGES)


def characters(pages: list[Path]) -> str:
    """Every CJK character in the pages, their JSON-escaped demo states included, sorted."""
    found: set[str] = set()
    for page in pages:
        text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), page.read_text(encoding="utf-8"))
        found.update(c for c in html.unescape(text) if cjk(c))
    return "".join(sorted(found))


def _to_truetype(font) -> None:
    """Replace a CFF-outlined font's outlines by TrueType ones, in place (fontTools' Snippets/otf2ttf.py)."""
    from fontTools.pens.cu2quPen import Cu2QuPen
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib import newTable

    order = font.getGlyphOrder()
    glyphs = font.getGlyphSet()
    glyf = newTable("glyf")
    glyf.glyphOrder, glyf.glyphs = order, {}
    for name in order:
        pen = TTGlyphPen(glyphs)
        glyphs[name].draw(Cu2QuPen(pen, max_err=1.0, reverse_direction=True))
        glyf[name] = pen.glyph()
    font["glyf"], font["loca"] = glyf, newTable("loca")
    for table in ("CFF ", "VORG"):
        if table in font:
            del font[table]
    maxp = font["maxp"] = newTable("maxp")
    maxp.tableVersion = 0x00010000
    for attr in ("maxZones", "maxTwilightPoints", "maxStorage", "maxFunctionDefs", "maxInstructionDefs",
                 "maxStackElements", "maxSizeOfInstructions", "maxComponentElements", "maxPoints", "maxContours",
                 "maxCompositePoints", "maxCompositeContours", "maxComponentDepth"):
        setattr(maxp, attr, 0)
    maxp.maxZones, maxp.numGlyphs = 1, len(order)
    font["head"].glyphDataFormat = 0
    post = font["post"]
    post.formatType, post.extraNames, post.mapping, post.glyphOrder = 2.0, [], {}, order
    font.sfntVersion = "\x00\x01\x00\x00"


def truetype_subset(collection: Path, chars: str, out: Path) -> Path:
    """The FACE of a Noto CJK collection, cut to chars, with TrueType outlines, saved to out."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    faces = [f for f in TTCollection(str(collection), lazy=True).fonts if f["name"].getDebugName(1) == FACE]
    if not faces:
        raise FontMissing(f"{collection} holds no {FACE!r} face")
    font = faces[0]
    options = subset.Options()
    options.layout_features, options.name_IDs, options.hinting, options.desubroutinize = ["*"], ["*"], False, True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    _to_truetype(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    font.save(str(tmp))
    tmp.replace(out)
    return out


def fonts_for(pages: list[Path], folder: Path) -> dict[int, Path]:
    """weight -> the TrueType subset of Noto Sans CJK SC at that weight for these pages, made if not kept yet."""
    chars = characters(pages)
    out = {}
    for weight, name in WEIGHTS.items():
        collection = NOTO / name
        if not collection.exists():
            raise FontMissing(f"{collection} is missing: install Debian's fonts-noto-cjk (apt-get install fonts-noto-cjk)")
        key = hashlib.sha256(f"{chars}|{collection.stat().st_size}|{collection.stat().st_mtime_ns}".encode()).hexdigest()
        path = folder / f"NotoSansCJKsc-{weight}-{key[:12]}.ttf"
        out[weight] = path if path.exists() else truetype_subset(collection, chars, path)
    return out


def font_face_css(fonts: dict[int, Path], family: str) -> str:
    return "".join(f'@font-face {{ font-family: "{family}"; font-weight: {weight}; src: url("{path.resolve().as_uri()}"); '
                   f"unicode-range: {UNICODE_RANGE}; }}\n" for weight, path in fonts.items())
