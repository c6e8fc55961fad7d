"""bertlib: a small, readable BERT in PyTorch, numerically equal to transformers.

Every chapter of the course imports from here; the graded notebooks use it as the oracle.
Names are Hugging Face's, so checkpoints load as they are and what you learn transfers.
"""
from .attention import additive_mask, build_attention_mask, causal_visibility, eager_attention, padding_visibility
from .config import BertConfig
from .embeddings import BertEmbeddings
from .heads import (
    BertForMaskedLM,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    decode_span,
    mlm_loss,
    nsp_loss,
)
from .modeling import BertModel, BertPreTrainedModel
from .params import count_module_parameters, count_parameters
from .weights import CheckpointMismatchError, MissingWeightsError

try:  # written alongside; imported lazily so a partial checkout still imports the model
    from .tokenizer import BertTokenizer
except ImportError:  # pragma: no cover
    pass
try:
    from .masking import mask_tokens
except ImportError:  # pragma: no cover
    pass
try:
    from .nsp import NspExample, create_nsp_examples
except ImportError:  # pragma: no cover
    pass

__version__ = "0.1.0"
