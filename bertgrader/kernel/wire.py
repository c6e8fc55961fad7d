"""A data-only wire format between the trusted grader and the student's sandboxed kernel.

Nothing on the wire is code: a message is a safetensors blob whose header metadata holds one JSON value.
Tensors travel as safetensors tensors, everything else as JSON, with a few tagged objects that each side
rebuilds from data (a seeded generator, a config, a module with its weights). Decoding never imports or
calls anything named by the message, except the short allow-list of constructors below, so a malicious
kernel can send back wrong numbers, never behaviour.

    blob = encode({"ids": torch.arange(6).view(2, 3), "p": 0.15})
    decode(blob)  # {'ids': tensor([[0, 1, 2], [3, 4, 5]]), 'p': 0.15}
"""
from __future__ import annotations

import base64
import json
import math
import random
import struct

import torch
from safetensors.torch import load as _load_tensors
from safetensors.torch import save as _save_tensors

MAX_BYTES = 64 * 2**20  # the most one message may hold; a bigger answer is refused, not parsed
MAX_DEPTH = 32
TAG = "__wire__"

# Module classes either side may rebuild from (class path, init args, state dict). Anything else is refused.
MODULES = {
    "torch.nn.Linear", "torch.nn.Embedding", "torch.nn.LayerNorm", "torch.nn.Dropout",
    "bertlib.embeddings.BertEmbeddings", "bertlib.encoder.BertPooler", "bertlib.heads.BertPredictionHeadTransform",
    "bertlib.heads.BertLMPredictionHead", "bertlib.heads.BertPreTrainingHeads",
    "bertlib.attention.BertSelfAttention", "bertlib.encoder.BertLayer",
}


class WireError(ValueError):
    """A message that is not well formed, too big, too deep or names something outside the allow-list."""


class Generator:
    """Stands for ``torch.Generator().manual_seed(seed)``: the receiver builds a fresh one."""

    def __init__(self, seed: int):
        self.seed = int(seed)


class Random:
    """Stands for ``random.Random(seed)``."""

    def __init__(self, seed: int):
        self.seed = int(seed)


class Module:
    """Stands for a module: ``cls(*args, **kwargs)`` with ``state`` loaded and train/eval mode set."""

    def __init__(self, cls: str, args=(), kwargs=None, state=None, training: bool = False):
        if cls not in MODULES:
            raise WireError(f"module class {cls!r} is not on the wire's allow-list")
        self.cls, self.args, self.kwargs = cls, list(args), dict(kwargs or {})
        self.state, self.training = dict(state or {}), bool(training)

    @classmethod
    def of(cls, module: torch.nn.Module, *args, **kwargs) -> "Module":
        """Describe an existing module (its class must be on the allow-list) built with ``args``/``kwargs``."""
        path = f"{type(module).__module__}.{type(module).__qualname__}"
        path = {"torch.nn.modules.linear.Linear": "torch.nn.Linear",
                "torch.nn.modules.sparse.Embedding": "torch.nn.Embedding",
                "torch.nn.modules.normalization.LayerNorm": "torch.nn.LayerNorm",
                "torch.nn.modules.dropout.Dropout": "torch.nn.Dropout"}.get(path, path)
        return cls(path, args, kwargs, {k: v.detach().clone() for k, v in module.state_dict().items()},
                   module.training)


class Strided:
    """Stands for ``tensor`` delivered as a non-contiguous view with the same values: a slice of a buffer
    one larger in every dimension (so no two dimensions can be merged by ``.view``), the form a caller's
    slice takes; a 1-d tensor arrives as every other element of a buffer twice its length. Sent so that
    ``.view`` on an input a caller sliced is tried: ``wire.Strided(torch.arange(6).view(2, 3))`` arrives
    with strides (4, 1)."""

    def __init__(self, tensor: torch.Tensor):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError("wire.Strided holds a tensor")
        self.tensor = tensor


class Config:
    """Stands for ``bertlib.BertConfig(**fields)``."""

    def __init__(self, fields: dict):
        self.fields = dict(fields)


class Handle:
    """An object that stays in the kernel (a student's model, say); the trusted side refers to it by id."""

    def __init__(self, id: int, type_name: str = ""):
        self.id, self.type_name = int(id), str(type_name)

    def __repr__(self):
        return f"<{self.type_name or 'object'} in the student's kernel>"


class Unsendable(Exception):
    """Raised by encode() for a value the format cannot carry (the kernel side then sends a Handle)."""


# ---------------------------------------------------------------------------------------------------- encode
def _encode(value, tensors: dict, depth: int):
    if depth > MAX_DEPTH:
        raise Unsendable("nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else {TAG: "bigint", "v": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {TAG: "float", "v": repr(value)}
    if isinstance(value, torch.Tensor):
        name = f"t{len(tensors)}"
        tensors[name] = value.detach().to("cpu").contiguous().clone()
        return {TAG: "tensor", "name": name}
    if isinstance(value, torch.dtype):
        return {TAG: "dtype", "v": str(value).removeprefix("torch.")}
    if isinstance(value, torch.Size):
        return {TAG: "size", "v": list(value)}
    if isinstance(value, (list, tuple)):
        items = [_encode(v, tensors, depth + 1) for v in value]
        return items if isinstance(value, list) else {TAG: "tuple", "v": items}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return {TAG: "pairs", "v": [[_encode(k, tensors, depth + 1), _encode(v, tensors, depth + 1)]
                                        for k, v in value.items()]}
        return {TAG: "dict", "v": {k: _encode(v, tensors, depth + 1) for k, v in value.items()}}
    if isinstance(value, Strided):
        return {TAG: "strided", "v": _encode(value.tensor, tensors, depth + 1)}
    if isinstance(value, Generator):
        return {TAG: "generator", "seed": value.seed}
    if isinstance(value, Random):
        return {TAG: "random", "seed": value.seed}
    if isinstance(value, Config):
        return {TAG: "config", "v": _encode(value.fields, tensors, depth + 1)}
    if isinstance(value, Module):
        return {TAG: "module", "cls": value.cls, "args": _encode(value.args, tensors, depth + 1),
                "kwargs": _encode(value.kwargs, tensors, depth + 1),
                "state": _encode(value.state, tensors, depth + 1), "training": value.training}
    if isinstance(value, Handle):
        return {TAG: "handle", "id": value.id, "type": value.type_name}
    if hasattr(value, "__dataclass_fields__"):  # a model output: send its fields, named
        fields = {k: getattr(value, k) for k in value.__dataclass_fields__}
        return {TAG: "record", "type": type(value).__name__, "v": _encode(fields, tensors, depth + 1)}
    raise Unsendable(f"a {type(value).__name__} cannot travel as data")


def encode(value) -> bytes:
    tensors: dict = {}
    doc = json.dumps(_encode(value, tensors, 0), allow_nan=False)
    blob = _save_tensors(tensors, metadata={"value": doc})
    if len(blob) > MAX_BYTES:
        raise Unsendable(f"{len(blob)} bytes is more than the {MAX_BYTES} a message may hold")
    return blob


# ---------------------------------------------------------------------------------------------------- decode
class Record(dict):
    """A decoded model output: its fields by name, also as attributes (``out.logits``)."""

    def __init__(self, type_name: str, fields: dict):
        super().__init__(fields)
        self.type_name = type_name

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{self.type_name} has no field {name!r}") from None


def _header(blob: bytes) -> dict:
    if len(blob) < 8:
        raise WireError("message too short")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise WireError("message header runs past its end")
    try:
        header = json.loads(blob[8:8 + n])
        return json.loads(header["__metadata__"]["value"])
    except (ValueError, KeyError, TypeError) as e:
        raise WireError(f"message header unreadable: {e}") from None


def _decode(doc, tensors: dict, build, depth: int):
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    if doc is None or isinstance(doc, (bool, int, float, str)):
        return doc
    if isinstance(doc, list):
        return [_decode(v, tensors, build, depth + 1) for v in doc]
    if not isinstance(doc, dict) or TAG not in doc:
        raise WireError("untagged object in message")
    tag, sub = doc[TAG], (lambda v: _decode(v, tensors, build, depth + 1))
    if tag == "tensor":
        if doc.get("name") not in tensors:
            raise WireError("message refers to a tensor it does not hold")
        return tensors[doc["name"]]
    if tag == "tuple":
        return tuple(sub(doc["v"]))
    if tag == "dict":
        return {str(k): sub(v) for k, v in dict(doc["v"]).items()}
    if tag == "pairs":
        return {sub(k): sub(v) for k, v in doc["v"]}
    if tag == "bigint":
        return int(str(doc["v"]))
    if tag == "float":
        return float(str(doc["v"]))
    if tag == "dtype":
        dtype = getattr(torch, str(doc["v"]), None)
        if not isinstance(dtype, torch.dtype):
            raise WireError(f"unknown dtype {doc['v']!r}")
        return dtype
    if tag == "size":
        return torch.Size([int(v) for v in doc["v"]])
    if tag == "record":
        return Record(str(doc["type"]), sub(doc["v"]))
    if tag == "handle":
        return Handle(int(doc["id"]), str(doc.get("type", "")))
    if tag == "strided":
        inner = sub(doc["v"])
        if not isinstance(inner, torch.Tensor):
            raise WireError("a strided value that is not a tensor")
        return build(tag, inner, sub)
    if tag in ("generator", "random", "config", "module"):
        return build(tag, doc, sub)
    raise WireError(f"unknown tag {tag!r}")


def _describe(tag, doc, sub):
    """Default decoding of the tagged objects: back into the descriptions (the trusted side's view)."""
    if tag == "strided":
        return Strided(doc)
    if tag == "generator":
        return Generator(doc["seed"])
    if tag == "random":
        return Random(doc["seed"])
    if tag == "config":
        return Config(sub(doc["v"]))
    return Module(str(doc["cls"]), sub(doc["args"]), sub(doc["kwargs"]), sub(doc["state"]), bool(doc["training"]))


def materialize(tag, doc, sub):
    """Decoding that builds real objects (the kernel's view): generators, configs, modules with weights."""
    if tag == "strided":
        return non_contiguous(doc)
    if tag == "generator":
        return torch.Generator().manual_seed(int(doc["seed"]))
    if tag == "random":
        return random.Random(int(doc["seed"]))
    if tag == "config":
        import bertlib

        return bertlib.BertConfig(**sub(doc["v"]))
    path = str(doc["cls"])
    if path not in MODULES:
        raise WireError(f"module class {path!r} is not on the wire's allow-list")
    import importlib

    owner, name = path.rsplit(".", 1)
    module = getattr(importlib.import_module(owner), name)(*sub(doc["args"]), **sub(doc["kwargs"]))
    module.load_state_dict(sub(doc["state"]))
    return module.train(bool(doc["training"]))


def non_contiguous(tensor: torch.Tensor) -> torch.Tensor:
    """A view holding ``tensor``'s values that ``.view`` cannot flatten: a slice of a buffer one larger in
    every dimension (every other element of a buffer twice as long, for a 1-d tensor)."""
    if tensor.dim() == 0:
        return tensor.clone()
    if tensor.dim() == 1:
        buffer = torch.zeros(2 * tensor.shape[0], dtype=tensor.dtype)
        view = buffer[::2]
    else:
        buffer = torch.zeros([s + 1 for s in tensor.shape], dtype=tensor.dtype)
        view = buffer[tuple(slice(0, s) for s in tensor.shape)]
    view.copy_(tensor)
    return view


def decode(blob: bytes, build=_describe):
    if len(blob) > MAX_BYTES:
        raise WireError(f"{len(blob)} bytes is more than the {MAX_BYTES} a message may hold")
    doc = _header(blob)
    try:
        tensors = _load_tensors(bytes(blob))
    except Exception as e:  # safetensors raises its own error types
        raise WireError(f"tensors unreadable: {e}") from None
    return _decode(doc, tensors, build, 0)


def to_text(blob: bytes) -> str:
    return base64.b64encode(blob).decode("ascii")


def from_text(text: str) -> bytes:
    if len(text) > MAX_BYTES * 4 // 3 + 4:
        raise WireError("message too long")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as e:
        raise WireError(f"not base64: {e}") from None
