"""BERT's WordPiece tokenizer: text -> [CLS] A [SEP] B [SEP] ids, and back.

Chapter 5 explains it: "[CLS] and [SEP]" for the input format and segment ids, and the WordPiece section
for how words are cut into vocabulary pieces. The rules are those of the original google-research/bert
`tokenization.py`, with transformers' changes (NFC normalisation, a 100-character word limit, special
tokens written in the text kept whole), so ids equal `transformers.BertTokenizerLegacy`'s.

Two stages, as in the original:
  BasicTokenizer      clean the text, space out CJK ideographs, split on whitespace,
                      lower-case and strip accents, split off punctuation
  WordpieceTokenizer  cut each word greedily into the longest pieces in the vocabulary ("##" = continues a word)
BertTokenizer glues them together, caches the result per word (real text repeats its words a lot, so most
words are a single dict lookup) and builds the model inputs: special tokens, segment ids, truncation,
padding, tensors.
"""

import json
import os
import re
import unicodedata

from .io import read_json_object

# BERT's special tokens, in the order of BERT's vocabulary ([PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102,
# [MASK] 103): a vocabulary built in code lists them first, in this order (``list(DEFAULT_SPECIAL_TOKENS.values())``).
DEFAULT_SPECIAL_TOKENS = {
    "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]",
}
# The order transformers lists them in (all_special_tokens / all_special_ids).
SPECIAL_TOKEN_NAMES = ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
VOCAB_FILE = "vocab.txt"
CONFIG_FILE = "tokenizer_config.json"
LARGE_INTEGER = int(1e20)  # transformers stores "no limit" as 1e30; anything this big means no limit


# ----------------------------------------------------------------------------------------------------------
# Character classes (names and rules as in the original tokenization.py)

def _is_whitespace(char):
    """Space, tab, newline, CR, and Unicode space separators (Zs)."""
    # \t \n \r are control characters to Unicode, but they separate words
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char):
    """Unicode categories C* (control, format such as zero-width joiners, unassigned), except \\t \\n \\r."""
    if char in "\t\n\r":
        return False
    return unicodedata.category(char).startswith("C")


def _is_punctuation(char):
    """All non-alphanumeric printable ASCII, and Unicode categories P*."""
    cp = ord(char)
    # ^ $ ` + < = > | ~ are symbols (S*) to Unicode, but BERT splits them off like punctuation
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_chinese_char(cp):
    """CJK Unified Ideographs (and extensions A-E) and CJK Compatibility Ideographs; not kana, not hangul."""
    # Japanese kana and Korean hangul write space-separated words, so only ideographs get spaced out
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F
    )


class _CleanupTable(dict):
    """A str.translate table for the first cleaning pass, filled in lazily, one code point at a time.

    str.translate runs in C and consults the dict only on a miss, so after warming up, cleaning a text costs
    one C-level pass instead of a Python call per character.
    """

    def __init__(self, space_cjk):
        super().__init__()
        self.space_cjk = space_cjk

    def __missing__(self, cp):
        char = chr(cp)
        if cp == 0 or cp == 0xFFFD or _is_control(char):
            out = None  # dropped: NUL, the replacement character, control and format characters
        elif _is_whitespace(char):
            out = " "
        elif self.space_cjk and _is_chinese_char(cp):
            out = f" {char} "  # each ideograph becomes a word of its own
        else:
            out = cp  # unchanged
        self[cp] = out
        return out


class _PunctuationCache(dict):
    """char -> is it punctuation?, computed once per distinct character."""

    def __missing__(self, char):
        self[char] = out = _is_punctuation(char)
        return out


# Shared by all tokenizers: the answers depend only on the character (and on the CJK option).
_CLEANUP_TABLES = {True: _CleanupTable(space_cjk=True), False: _CleanupTable(space_cjk=False)}
_PUNCTUATION = _PunctuationCache()


def _strip_accents(text):
    """'Ångström' -> 'Angstrom': decompose (NFD), then drop the combining marks (category Mn)."""
    if text.isascii():
        return text  # nothing to strip, skip the normalisation
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def _split_on_punctuation(word):
    """'hello!?' -> ['hello', '!', '?']: every punctuation character is a token of its own."""
    if word.isalnum():
        return [word]  # letters and digits only (the common case): nothing to split
    pieces, current = [], []
    for char in word:
        if _PUNCTUATION[char]:
            if current:
                pieces.append("".join(current))
                current = []
            pieces.append(char)
        else:
            current.append(char)
    if current:
        pieces.append("".join(current))
    return pieces


def load_vocab(vocab_file):
    """vocab.txt, one token a line -> {token: line number}."""
    vocab = {}
    with open(vocab_file, encoding="utf-8") as f:
        for index, line in enumerate(f):
            vocab[line.rstrip("\n")] = index  # keep other trailing whitespace: it can be part of a token
    return vocab


# ----------------------------------------------------------------------------------------------------------
# Stage 1: basic tokenization

class BasicTokenizer:
    """Cleaning, CJK spacing, whitespace split, lower-casing/accent stripping, punctuation split."""

    def __init__(self, do_lower_case=True, never_split=None, tokenize_chinese_chars=True, strip_accents=None):
        self.do_lower_case = do_lower_case
        self.never_split = set(never_split or ())
        self.tokenize_chinese_chars = tokenize_chinese_chars
        # None follows do_lower_case (the original BERT always strips accents when lower-casing)
        self.strip_accents = strip_accents
        self._table = _CLEANUP_TABLES[bool(tokenize_chinese_chars)]

    def tokenize(self, text, never_split=None):
        """'Hello, World!' -> ['hello', ',', 'world', '!']."""
        never_split = self.never_split.union(never_split) if never_split else self.never_split
        tokens = []
        for word in self.split_words(text):
            tokens.extend(self.split_word(word, never_split))
        return tokens

    def split_words(self, text):
        """Clean the text, space out ideographs, NFC-normalise, split on whitespace."""
        text = text.translate(self._table)
        # NFC so that 'e' + combining acute and the precomposed 'é' give the same word
        return unicodedata.normalize("NFC", text).split()

    def split_word(self, word, never_split=()):
        """One whitespace-separated word -> its lower-cased, accent-stripped, punctuation-split pieces."""
        if word in never_split:
            return [word]  # e.g. "[MASK]": neither lower-cased nor split at its brackets
        if self.do_lower_case:
            word = word.lower()
            if self.strip_accents is not False:
                word = _strip_accents(word)
        elif self.strip_accents:
            word = _strip_accents(word)
        return _split_on_punctuation(word)


# ----------------------------------------------------------------------------------------------------------
# Stage 2: WordPiece

class WordpieceTokenizer:
    """Greedy longest-match-first: 'unaffable' -> ['una', '##ffa', '##ble'] (bert-base-uncased vocabulary)."""

    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=100):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        # No vocabulary entry is longer than this, so no longer candidate needs to be tried.
        self._max_piece_chars = max((len(t) - 2 if t.startswith("##") else len(t) for t in vocab), default=0)

    def tokenize(self, text):
        """Whitespace-separated words (already through BasicTokenizer) -> word pieces."""
        tokens = []
        for word in text.split():
            tokens.extend(self.tokenize_word(word))
        return tokens

    def tokenize_word(self, word):
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        if word in self.vocab:
            return [word]  # most words are in the vocabulary whole
        pieces, start = [], 0
        while start < len(word):
            prefix = "##" if start > 0 else ""
            end = min(len(word), start + self._max_piece_chars)
            while end > start and prefix + word[start:end] not in self.vocab:
                end -= 1
            if end == start:
                return [self.unk_token]  # some part cannot be matched: the whole word is unknown
            pieces.append(prefix + word[start:end])
            start = end
        return pieces


# ----------------------------------------------------------------------------------------------------------
# The model-facing tokenizer

class BatchEncoding(dict):
    """The tokenizer's output: a dict with attribute access (enc.input_ids) and .to(device) for tensors."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, device):
        return BatchEncoding({k: v.to(device) if hasattr(v, "to") else v for k, v in self.items()})


class BertTokenizer:
    """BERT's tokenizer, with the names and behaviour of transformers' BertTokenizerLegacy.

    >>> tok = BertTokenizer.from_pretrained(model_dir)
    >>> tok("the cat sat", "on the mat")
    {'input_ids': [101, 1996, 4937, 2938, 102, 2006, 1996, 13523, 102],
     'token_type_ids': [0, 0, 0, 0, 0, 1, 1, 1, 1], 'attention_mask': [1, 1, 1, 1, 1, 1, 1, 1, 1]}
    """

    def __init__(self, vocab_file, do_lower_case=True, tokenize_chinese_chars=True, strip_accents=None,
                 model_max_length=None, unk_token=DEFAULT_SPECIAL_TOKENS["unk_token"],
                 sep_token=DEFAULT_SPECIAL_TOKENS["sep_token"], pad_token=DEFAULT_SPECIAL_TOKENS["pad_token"],
                 cls_token=DEFAULT_SPECIAL_TOKENS["cls_token"], mask_token=DEFAULT_SPECIAL_TOKENS["mask_token"],
                 max_input_chars_per_word=100,
                 clean_up_tokenization_spaces=True, word_cache_size=100_000):
        tokens = dict(unk_token=unk_token, sep_token=sep_token, pad_token=pad_token,
                      cls_token=cls_token, mask_token=mask_token)
        for name, token in tokens.items():
            if not isinstance(token, str) or not token:
                raise ValueError(f"{name} must be a non-empty string, got {token!r}")
        if isinstance(vocab_file, dict):
            vocab = dict(vocab_file)
        elif os.path.isfile(vocab_file):
            vocab = load_vocab(vocab_file)
            # A vocabulary file is a model's: a special token it lacks would get an id the model has no
            # embedding for (a dict vocabulary, built in code, gets the next free ids as in transformers).
            if not vocab:
                raise ValueError(f"{vocab_file} is empty: a {VOCAB_FILE} lists one token a line")
            missing = [token for token in tokens.values() if token not in vocab]
            if missing:
                raise ValueError(f"{vocab_file} has no line for {', '.join(missing)}: a BERT vocabulary lists "
                                 f"its special tokens ({', '.join(tokens.values())})")
        else:
            raise FileNotFoundError(f"vocabulary file not found: {vocab_file!r} "
                                    f"(expected a {VOCAB_FILE}, one token a line, or a dict token -> id)")
        for name, token in tokens.items():
            # like transformers, a special token missing from the vocabulary gets the next free id
            vocab.setdefault(token, max(vocab.values(), default=-1) + 1)
            setattr(self, name, token)
        self.vocab = vocab
        self.ids_to_tokens = {i: t for t, i in vocab.items()}
        no_limit = model_max_length is None or model_max_length >= LARGE_INTEGER
        self.model_max_length = None if no_limit else int(model_max_length)
        self.clean_up_tokenization_spaces = clean_up_tokenization_spaces

        self.all_special_tokens = [tokens[name] for name in SPECIAL_TOKEN_NAMES]
        self.all_special_ids = [vocab[t] for t in self.all_special_tokens]
        self.basic_tokenizer = BasicTokenizer(do_lower_case, None, tokenize_chinese_chars, strip_accents)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab, unk_token, max_input_chars_per_word)

        # Special tokens written in the text ("the [MASK] sat") are cut out before anything else, exactly
        # as written (case-sensitive), longest first so that one cannot shadow a longer one.
        alternatives = sorted(set(self.all_special_tokens), key=len, reverse=True)
        self._special_re = re.compile("|".join(re.escape(t) for t in alternatives))
        self._special_set = frozenset(self.all_special_tokens)
        self._word_cache = {}  # whitespace-separated word -> (tokens, ids)
        self._word_cache_size = word_cache_size

    # --- loading and saving -------------------------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, model_dir, **kwargs):
        """Read model_dir/vocab.txt and, if present, model_dir/tokenizer_config.json; kwargs override the config."""
        model_dir = os.fspath(model_dir)
        if not os.path.isdir(model_dir):
            raise FileNotFoundError(f"tokenizer directory not found: {model_dir!r}")
        vocab_file = os.path.join(model_dir, VOCAB_FILE)
        if not os.path.isfile(vocab_file):
            raise FileNotFoundError(f"{model_dir!r} has no {VOCAB_FILE}: a BERT tokenizer needs its vocabulary file")
        config = {}
        config_file = os.path.join(model_dir, CONFIG_FILE)
        if os.path.isfile(config_file):
            config = read_json_object(config_file)
        return cls(vocab_file, **{**cls._init_kwargs_from_config(config, config_file), **kwargs})

    @staticmethod
    def _init_kwargs_from_config(config, config_file):
        if config.get("do_basic_tokenize", True) is False or config.get("never_split"):
            raise ValueError(f"{config_file}: do_basic_tokenize=False and never_split are not supported")
        kwargs = {k: config[k] for k in ("do_lower_case", "strip_accents", "tokenize_chinese_chars",
                                         "model_max_length", "clean_up_tokenization_spaces") if k in config}
        for name in SPECIAL_TOKEN_NAMES:
            token = config.get(name)
            if isinstance(token, dict):  # serialised AddedToken: {"content": "[MASK]", "lstrip": false, ...}
                token = token.get("content")
            if token is not None:
                kwargs[name] = token
        return kwargs

    def save_pretrained(self, save_directory):
        """Write vocab.txt and tokenizer_config.json (loadable by transformers' BertTokenizer[Legacy])."""
        os.makedirs(save_directory, exist_ok=True)
        ordered = sorted(self.vocab.items(), key=lambda kv: kv[1])
        if [i for _, i in ordered] != list(range(len(ordered))):
            raise ValueError("cannot save a vocabulary whose ids are not 0..N-1 without gaps: "
                             "vocab.txt stores each id as a line number")
        vocab_file = os.path.join(save_directory, VOCAB_FILE)
        with open(vocab_file, "w", encoding="utf-8") as f:
            f.writelines(token + "\n" for token, _ in ordered)
        basic = self.basic_tokenizer
        config = {
            "tokenizer_class": "BertTokenizer",
            "do_lower_case": basic.do_lower_case,
            "strip_accents": basic.strip_accents,
            "tokenize_chinese_chars": basic.tokenize_chinese_chars,
            "do_basic_tokenize": True,
            "never_split": None,
            "clean_up_tokenization_spaces": self.clean_up_tokenization_spaces,
            **{name: getattr(self, name) for name in SPECIAL_TOKEN_NAMES},
        }
        if self.model_max_length is not None:
            config["model_max_length"] = self.model_max_length
        config_file = os.path.join(save_directory, CONFIG_FILE)
        with open(config_file, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2, ensure_ascii=False)
            f.write("\n")
        return vocab_file, config_file

    # --- vocabulary -----------------------------------------------------------------------------------------

    @property
    def vocab_size(self):
        return len(self.vocab)

    def __len__(self):
        return len(self.vocab)

    def get_vocab(self):
        return dict(self.vocab)

    @property
    def do_lower_case(self):
        return self.basic_tokenizer.do_lower_case

    @property
    def unk_token_id(self):
        return self.vocab[self.unk_token]

    @property
    def sep_token_id(self):
        return self.vocab[self.sep_token]

    @property
    def pad_token_id(self):
        return self.vocab[self.pad_token]

    @property
    def cls_token_id(self):
        return self.vocab[self.cls_token]

    @property
    def mask_token_id(self):
        return self.vocab[self.mask_token]

    def convert_tokens_to_ids(self, tokens):
        """A token or a list of tokens -> id(s); unknown tokens map to [UNK]'s id."""
        unk = self.unk_token_id
        if isinstance(tokens, str):
            return self.vocab.get(tokens, unk)
        return [self.vocab.get(t, unk) for t in tokens]

    def convert_ids_to_tokens(self, ids, skip_special_tokens=False):
        """An id or a list of ids -> token(s); unknown ids map to [UNK]."""
        if isinstance(ids, int):
            return self.ids_to_tokens.get(ids, self.unk_token)
        skip = set(self.all_special_ids) if skip_special_tokens else ()
        return [self.ids_to_tokens.get(i, self.unk_token) for i in map(int, ids) if i not in skip]

    # --- text -> tokens -------------------------------------------------------------------------------------

    def tokenize(self, text):
        """'Hello, unaffable world!' -> ['hello', ',', 'una', '##ffa', '##ble', 'world', '!']."""
        return self._encode_text(text, as_ids=False)

    def _encode_text(self, text, as_ids):
        """The tokens of one text, or (``as_ids``) their ids. This is the hot path."""
        if not isinstance(text, str):
            raise ValueError(f"expected a str to tokenize, got {type(text).__name__}")
        field = 1 if as_ids else 0  # the word cache holds (tokens, ids)
        out = []
        split_words = self.basic_tokenizer.split_words
        cache = self._word_cache
        for segment, is_special in self._split_on_special_tokens(text):
            if is_special:
                out.append(self.vocab[segment] if as_ids else segment)
                continue
            for word in split_words(segment):
                entry = cache.get(word)
                if entry is None:
                    entry = self._tokenize_word(word)
                out.extend(entry[field])
        return out

    def _split_on_special_tokens(self, text):
        """'a[SEP]b' -> [('a', False), ('[SEP]', True), ('b', False)]."""
        match = self._special_re.search(text)
        if match is None:
            return ((text, False),)  # the common case: no special token written in the text
        segments, start = [], 0
        while match is not None:
            if match.start() > start:
                segments.append((text[start:match.start()], False))
            segments.append((match.group(), True))
            start = match.end()
            match = self._special_re.search(text, start)
        if start < len(text):
            segments.append((text[start:], False))
        return segments

    def _tokenize_word(self, word):
        """One whitespace-separated word -> (tokens, ids), remembered for the next time the word is seen."""
        tokens = []
        # A word that is exactly a special token (e.g. "[MA\u200bSK]" once the zero-width space is dropped)
        # is kept whole, as transformers does; WordPiece then finds it in the vocabulary.
        for piece in self.basic_tokenizer.split_word(word, self._special_set):
            tokens.extend(self.wordpiece_tokenizer.tokenize_word(piece))
        unk = self.vocab[self.unk_token]
        entry = (tuple(tokens), tuple(self.vocab.get(t, unk) for t in tokens))
        if len(self._word_cache) >= self._word_cache_size:
            self._word_cache.clear()  # crude, but keeps memory bounded on endless streams of new words
        self._word_cache[word] = entry
        return entry

    # --- model inputs ---------------------------------------------------------------------------------------

    def build_inputs_with_special_tokens(self, token_ids_0, token_ids_1=None):
        """[CLS] A [SEP]  or  [CLS] A [SEP] B [SEP]."""
        cls, sep = [self.cls_token_id], [self.sep_token_id]
        if token_ids_1 is None:
            return cls + list(token_ids_0) + sep
        return cls + list(token_ids_0) + sep + list(token_ids_1) + sep

    def create_token_type_ids_from_sequences(self, token_ids_0, token_ids_1=None):
        """Segment ids: 0 for [CLS] A [SEP], 1 for B [SEP]."""
        first = [0] * (len(token_ids_0) + 2)
        if token_ids_1 is None:
            return first
        return first + [1] * (len(token_ids_1) + 1)

    def __call__(self, text, text_pair=None, *, add_special_tokens=True, padding=False, truncation=None,
                 max_length=None, return_tensors=None):
        """Encode a text, a pair, or a batch of either -> BatchEncoding(input_ids, token_type_ids, attention_mask).

        padding: False | True / "longest" (to the longest in the batch) | "max_length".
        truncation: None (truncate only if max_length is given and padding is off, as transformers does) |
            True / "longest_first" | "only_first" | "only_second" | False.
        return_tensors: None (lists) or "pt" (LongTensors of shape (B, T); a single text gets B = 1).
        """
        batched = isinstance(text, (list, tuple))
        texts, pairs = self._as_batch(text, text_pair, batched)
        padding = self._padding_strategy(padding)
        truncation, max_length = self._truncation_strategy(truncation, max_length, padding)
        if padding == "max_length" and max_length is None:
            raise ValueError("padding='max_length' needs max_length (or a tokenizer with model_max_length)")
        if return_tensors not in (None, "pt"):
            raise ValueError(f"return_tensors must be None or 'pt', got {return_tensors!r}")

        rows = [_layout(self, self._encode_text(a, as_ids=True),
                        None if b is None else self._encode_text(b, as_ids=True), add_special_tokens, truncation,
                        max_length, max_length if padding == "max_length" else 0)
                for a, b in zip(texts, pairs)]
        if padding == "longest" and rows:
            longest = max(len(r["input_ids"]) for r in rows)
            rows = [_pad(self, r, longest) for r in rows]
        encoding = {k: [r[k] for r in rows] for k in ("input_ids", "token_type_ids", "attention_mask")}
        if return_tensors == "pt":
            return BatchEncoding({k: self._to_tensor(v) for k, v in encoding.items()})
        if not batched:
            encoding = {k: v[0] for k, v in encoding.items()}
        return BatchEncoding(encoding)

    def prepare_for_model(self, ids, pair_ids=None, *, add_special_tokens=True, padding=False, truncation=None,
                          max_length=None, return_tensors=None):
        """BERT's input from token ids: ``[CLS] A [SEP]`` or ``[CLS] A [SEP] B [SEP]``, its segment ids (0 for
        [CLS] A [SEP], 1 for B [SEP], 0 on padding) and attention mask (1 on tokens, 0 on padding), truncated and
        padded as asked (the arguments of ``__call__``, transformers' name and meaning).

        The one place the layout is written: ``__call__``, NSP pairs (``bertlib.nsp.encode_nsp_example``) and the
        fine-tuning tasks all build their inputs here. It reads only ``cls_token_id``, ``sep_token_id``,
        ``pad_token_id`` (and ``model_max_length`` if present) of ``self``, so
        ``BertTokenizer.prepare_for_model(other, ...)`` lays out the input for any tokenizer with those ids.
        """
        if return_tensors not in (None, "pt"):
            raise ValueError(f"return_tensors must be None or 'pt', got {return_tensors!r}")
        padding = BertTokenizer._padding_strategy(padding)
        truncation, max_length = _truncation_strategy(truncation, max_length, padding,
                                                      getattr(self, "model_max_length", None))
        if padding == "max_length" and max_length is None:
            raise ValueError("padding='max_length' needs max_length (or a tokenizer with model_max_length)")
        row = _layout(self, list(ids), None if pair_ids is None else list(pair_ids), add_special_tokens, truncation,
                      max_length, max_length if padding == "max_length" else 0)
        if return_tensors == "pt":
            return BatchEncoding({k: BertTokenizer._to_tensor([v]) for k, v in row.items()})
        return BatchEncoding(row)

    def encode(self, text, text_pair=None, **kwargs):
        """Just the input ids of tok(text, text_pair, **kwargs)."""
        return self(text, text_pair, **kwargs)["input_ids"]

    @staticmethod
    def _as_batch(text, text_pair, batched):
        """Normalise the inputs to two equal-length lists (pairs may be all None)."""
        if not batched:
            if text_pair is not None and not isinstance(text_pair, str):
                raise ValueError("text is a single str, so text_pair must be a str (or None) too")
            texts, pairs = [text], [text_pair]
        else:
            texts = list(text)
            if text_pair is None:
                pairs = [None] * len(texts)
            elif isinstance(text_pair, (list, tuple)) and len(text_pair) == len(texts):
                pairs = list(text_pair)
            else:
                raise ValueError("text is a batch, so text_pair must be a list of the same length (or None)")
        for t in texts + [p for p in pairs if p is not None]:
            if not isinstance(t, str):
                raise ValueError(f"expected str inputs, got {type(t).__name__}: {t!r:.50}")
        return texts, pairs

    @staticmethod
    def _padding_strategy(padding):
        """-> None, 'longest' or 'max_length'."""
        if padding is False or padding == "do_not_pad":
            return None
        if padding is True or padding == "longest":
            return "longest"
        if padding == "max_length":
            return "max_length"
        raise ValueError(f"unknown padding strategy {padding!r}: use False, True, 'longest' or 'max_length'")

    def _truncation_strategy(self, truncation, max_length, padding):
        """-> (None | 'longest_first' | 'only_first' | 'only_second', max_length)."""
        return _truncation_strategy(truncation, max_length, padding, self.model_max_length)

    @staticmethod
    def _to_tensor(rows):
        import torch  # here, so that tokenizing alone does not need torch loaded

        lengths = {len(r) for r in rows}
        if len(lengths) > 1:
            raise ValueError(f"cannot make one tensor of sequences of lengths {sorted(lengths)}: "
                             "pass padding=True (or padding='max_length' with max_length)")
        return torch.tensor(rows, dtype=torch.long).reshape(len(rows), -1)

    # --- ids -> text ----------------------------------------------------------------------------------------

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        """ids -> text: pieces joined by spaces, '##' continuations glued back to their word."""
        if hasattr(token_ids, "tolist"):  # a tensor or an array
            token_ids = token_ids.tolist()
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        tokens = self.convert_ids_to_tokens(token_ids, skip_special_tokens=skip_special_tokens)
        text = " ".join(tokens).replace(" ##", "").strip()
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        return _clean_up_tokenization(text) if clean_up_tokenization_spaces else text

    def batch_decode(self, sequences, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self.decode(s, skip_special_tokens, clean_up_tokenization_spaces) for s in sequences]

    def __repr__(self):
        return (f"BertTokenizer(vocab_size={self.vocab_size}, do_lower_case={self.do_lower_case}, "
                f"model_max_length={self.model_max_length})")


def _truncation_strategy(truncation, max_length, padding, model_max_length):
    """-> (None | 'longest_first' | 'only_first' | 'only_second', max_length)."""
    if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
        raise ValueError(f"max_length must be a positive int, got {max_length!r}")
    if truncation is None:
        # transformers' rule: a max_length with no padding and no truncation flag means "truncate to it"
        truncation = max_length is not None and padding is None
    if truncation is True:
        truncation = "longest_first"
    elif truncation is False or truncation == "do_not_truncate":
        truncation = None
    if truncation not in (None, "longest_first", "only_first", "only_second"):
        raise ValueError(f"unknown truncation strategy {truncation!r}: use True, False, "
                         "'longest_first', 'only_first' or 'only_second'")
    if max_length is None:
        max_length = model_max_length
    if truncation is not None and max_length is None:
        raise ValueError("truncation needs max_length (or a tokenizer with model_max_length)")
    return truncation, max_length


def _layout(special, ids_a, ids_b, add_special_tokens, truncation, max_length, pad_to):
    """One row, as ``prepare_for_model`` returns it, with resolved strategies; padded to ``pad_to`` (0: not
    padded). ``special``: anything with ``cls_token_id``, ``sep_token_id`` and ``pad_token_id``."""
    n_special = (2 if ids_b is None else 3) if add_special_tokens else 0
    if truncation is not None:
        ids_a, ids_b = truncate_sequences(ids_a, ids_b, max_length - n_special, truncation, n_special)
    if add_special_tokens:
        input_ids = BertTokenizer.build_inputs_with_special_tokens(special, ids_a, ids_b)
        token_type_ids = BertTokenizer.create_token_type_ids_from_sequences(special, ids_a, ids_b)
    else:
        input_ids = ids_a + (ids_b or [])
        token_type_ids = [0] * len(input_ids)
    row = {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": [1] * len(input_ids)}
    return _pad(special, row, pad_to)


def _pad(special, row, length):
    """``row`` padded to ``length`` with [PAD] (segment 0, attention 0: padding is ignored); a longer row, which
    nothing truncated, is kept as it is."""
    n_pad = max(0, length - len(row["input_ids"]))
    if not n_pad:
        return row
    return {"input_ids": row["input_ids"] + [special.pad_token_id] * n_pad,
            "token_type_ids": row["token_type_ids"] + [0] * n_pad,
            "attention_mask": row["attention_mask"] + [0] * n_pad}


def truncate_sequences(ids_a, ids_b, max_tokens, strategy="longest_first", n_special=0):
    """Cut ids_a (and ids_b) so that together they hold at most max_tokens ids (special tokens not counted).

    longest_first is the original BERT `_truncate_seq_pair`: take one token at a time off the end of the
    longer sequence, off the second one on a tie. Only the lengths matter, so we count first and slice once.
    """
    if max_tokens < 0:
        raise ValueError(f"max_length is too small: the {n_special} special tokens alone need {n_special}")
    len_a, len_b = len(ids_a), len(ids_b) if ids_b is not None else 0
    excess = len_a + len_b - max_tokens
    if excess <= 0:
        return ids_a, ids_b
    if strategy == "only_second" and ids_b is None:
        raise ValueError("truncation='only_second' needs a pair of sequences")
    if strategy == "longest_first":
        for _ in range(excess):
            if len_a > len_b:
                len_a -= 1
            else:
                len_b -= 1
    elif strategy == "only_first":
        if excess > len_a:
            raise ValueError(f"truncation='only_first' cannot fit max_length: the second sequence alone "
                             f"has {len_b} tokens and {n_special} special tokens are added")
        len_a -= excess
    else:  # only_second
        if excess > len_b:
            raise ValueError(f"truncation='only_second' cannot fit max_length: the first sequence alone "
                             f"has {len_a} tokens and {n_special} special tokens are added")
        len_b -= excess
    return ids_a[:len_a], (ids_b[:len_b] if ids_b is not None else None)


def _clean_up_tokenization(text):
    """Undo the spaces decoding puts before punctuation and contractions ("don ' t" -> "don't")."""
    for spaced, glued in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                          (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(spaced, glued)
    return text
