"""bertlib: a small, readable BERT in PyTorch, numerically equal to transformers.

Every chapter of the course imports from here; the graded notebooks use it as the oracle.
Names are Hugging Face's, so checkpoints load as they are and what you learn transfers.

This top level is the model and its data code; what trains it (pretraining, fine-tuning, their corpus and
command lines) is the subpackage ``bertlib.training``, which imports from here and never the other way round.
Chapter 12's experiments are an application of both, kept beside the library in ``projects/``.
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
from .weights import CheckpointMismatchError, MissingWeightsError, UnreadableWeightsError

from .masking import IGNORE_INDEX, mask_tokens, masking_statistics
from .nsp import NspExample, create_nsp_examples
from .tokenizer import DEFAULT_SPECIAL_TOKENS, BertTokenizer

__version__ = "0.1.0"
