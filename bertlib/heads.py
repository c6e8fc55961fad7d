"""Task heads on top of ``BertModel``: pretraining (chapters 7 and 9) and fine-tuning (chapter 10).

- MLM: a transform (dense, GELU, LayerNorm), then a projection to the vocabulary whose weight *is* the
  word-embedding matrix (tied) plus a bias per word. The loss counts only labelled positions (``IGNORE_INDEX``, -100 = skip).
- NSP: a 2-way classifier on the pooled [CLS] vector; label 0 = IsNext, 1 = NotNext.
- Fine-tuning: sentence classification from the pooled [CLS], one label per token, and extractive QA
  (a start and an end logit per token, decoded into the best valid span by ``decode_span``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .config import BertConfig
from .activations import ACT2FN
from .masking import IGNORE_INDEX
from .modeling import BertModel, BertPreTrainedModel, ModelOutput


# ----------------------------------------------------------------------------- outputs
@dataclass
class BertForPreTrainingOutput(ModelOutput):
    loss: torch.Tensor | None = None  # MLM + NSP
    prediction_logits: torch.Tensor | None = None  # (B, T, V)
    seq_relationship_logits: torch.Tensor | None = None  # (B, 2)
    mlm_loss: torch.Tensor | None = None
    nsp_loss: torch.Tensor | None = None
    hidden_states: tuple | None = None
    attentions: tuple | None = None


@dataclass
class MaskedLMOutput(ModelOutput):
    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None  # (B, T, V)
    hidden_states: tuple | None = None
    attentions: tuple | None = None


@dataclass
class SequenceClassifierOutput(ModelOutput):
    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None  # (B, num_labels) or (B, T, num_labels) for tokens
    hidden_states: tuple | None = None
    attentions: tuple | None = None


TokenClassifierOutput = SequenceClassifierOutput
NextSentencePredictorOutput = SequenceClassifierOutput


@dataclass
class QuestionAnsweringModelOutput(ModelOutput):
    loss: torch.Tensor | None = None
    start_logits: torch.Tensor | None = None  # (B, T)
    end_logits: torch.Tensor | None = None  # (B, T)
    hidden_states: tuple | None = None
    attentions: tuple | None = None


# ----------------------------------------------------------------------------- losses
def mlm_loss(logits: torch.Tensor, labels: torch.Tensor, num_items_in_batch: int | float | None = None) -> torch.Tensor:
    """Cross-entropy over the labelled positions only: labels of ``IGNORE_INDEX`` are not counted at all.

    The mean over this batch's labels, or, with ``num_items_in_batch`` (transformers' name), their sum divided
    by it: the number of labels in the whole batch when this is a slice of it (another process's rows under
    DDP, or a micro-batch of gradient accumulation), so that the slices' losses add up to the whole batch's
    mean. A batch with no label at all then has loss 0.
    (Multiplying an already mean-reduced loss by a mask does *not* do this: chapter 7 shows why.)
    """
    logits, labels = logits.reshape(-1, logits.size(-1)), labels.reshape(-1)
    if num_items_in_batch is None:
        return F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX)
    total = F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX, reduction="sum")
    return total / num_items_in_batch if num_items_in_batch else total


def nsp_loss(logits: torch.Tensor, next_sentence_label: torch.Tensor,
             num_items_in_batch: int | float | None = None) -> torch.Tensor:
    """Cross-entropy of the 2-way IsNext (0) / NotNext (1) classifier: the mean over the pairs, or their sum
    divided by ``num_items_in_batch`` (``num_items_in_batch=1``: the sum, to average over several batches)."""
    logits, next_sentence_label = logits.reshape(-1, 2), next_sentence_label.reshape(-1)
    if num_items_in_batch is None:
        return F.cross_entropy(logits, next_sentence_label)
    return F.cross_entropy(logits, next_sentence_label, reduction="sum") / num_items_in_batch


# ----------------------------------------------------------------------------- head modules
class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.transform_act_fn = ACT2FN[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))  # (..., H)


class BertLMPredictionHead(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        # The weight is replaced by the word embeddings in tie_weights(); the bias is one number per word.
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        # One fused matmul-plus-bias (as transformers' tied decoder.bias does), not a matmul and then a
        # separate V-wide addition: at this width the projection is most of a small BERT's step.
        return F.linear(self.transform(hidden_states), self.decoder.weight, self.bias)  # (..., V)


class BertOnlyMLMHead(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)

    def forward(self, sequence_output):
        return self.predictions(sequence_output)


class BertOnlyNSPHead(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, pooled_output):
        return self.seq_relationship(pooled_output)  # (B, 2)


class BertPreTrainingHeads(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, sequence_output, pooled_output):
        return self.predictions(sequence_output), self.seq_relationship(pooled_output)


class _TiedMLM:
    """Mixin: the MLM decoder shares its weight with the word embeddings (V x H, counted once)."""

    tied_weights = {"cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight"}

    def tie_weights(self) -> None:
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight


def _mlm_logits_at(head: BertLMPredictionHead, sequence_output, labels, only_labelled: bool):
    """Vocabulary logits everywhere, or only at the labelled positions (far cheaper when training:
    the V-wide projection dominates a small BERT's step, and only ~15% of the positions need it)."""
    if only_labelled and labels is not None:
        selected = labels != IGNORE_INDEX  # (B, T)
        return head(sequence_output[selected]), labels[selected]  # (N, V), (N,)
    return head(sequence_output), labels


# ----------------------------------------------------------------------------- models
class BertForPreTraining(_TiedMLM, BertPreTrainedModel):
    """BERT as it was pretrained: loss = MLM (labelled positions only) + NSP."""

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.bert = BertModel(config)
        self.cls = BertPreTrainingHeads(config)
        self.post_init()

    def forward(
        self,
        input_ids,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        labels=None,  # (B, T): the original id at selected positions, -100 elsewhere
        next_sentence_label=None,  # (B,): 0 IsNext, 1 NotNext
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        logits_only_at_labels: bool = False,
        num_items_in_batch: int | float | None = None,
    ) -> BertForPreTrainingOutput:
        """``num_items_in_batch``: divide the MLM loss's sum by this number of labels rather than take the mean
        over this batch's (see ``mlm_loss``); the NSP loss is the mean over this batch's pairs either way."""
        out = self.bert(input_ids, attention_mask, token_type_ids, position_ids,
                        output_attentions, output_hidden_states)
        logits, kept_labels = _mlm_logits_at(self.cls.predictions, out.last_hidden_state, labels,
                                             logits_only_at_labels)  # (B, T, V) or (N, V)
        nsp_logits = self.cls.seq_relationship(out.pooler_output)  # (B, 2)
        lm = mlm_loss(logits, kept_labels, num_items_in_batch) if labels is not None else None
        ns = nsp_loss(nsp_logits, next_sentence_label) if next_sentence_label is not None else None
        loss = None
        if lm is not None and ns is not None:
            loss = lm + ns
        elif lm is not None or ns is not None:
            loss = lm if lm is not None else ns
        return BertForPreTrainingOutput(loss, logits, nsp_logits, lm, ns, out.hidden_states, out.attentions)


class BertForMaskedLM(_TiedMLM, BertPreTrainedModel):
    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False) -> MaskedLMOutput:
        out = self.bert(input_ids, attention_mask, token_type_ids, position_ids,
                        output_attentions, output_hidden_states)
        logits = self.cls(out.last_hidden_state)  # (B, T, V)
        loss = mlm_loss(logits, labels) if labels is not None else None
        return MaskedLMOutput(loss, logits, out.hidden_states, out.attentions)


class BertForNextSentencePrediction(BertPreTrainedModel):
    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.bert = BertModel(config)
        self.cls = BertOnlyNSPHead(config)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None, labels=None):
        out = self.bert(input_ids, attention_mask, token_type_ids, position_ids)
        logits = self.cls(out.pooler_output)  # (B, 2)
        loss = nsp_loss(logits, labels) if labels is not None else None
        return NextSentencePredictorOutput(loss, logits)


class _ClassifierBase(BertPreTrainedModel):
    def __init__(self, config: BertConfig, add_pooling_layer: bool):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=add_pooling_layer)
        p = config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        self.dropout = nn.Dropout(p)


class BertForSequenceClassification(_ClassifierBase):
    """One label per input: a linear layer on the pooled [CLS] vector (chapter 5 and chapter 10)."""

    def __init__(self, config: BertConfig):
        super().__init__(config, add_pooling_layer=True)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False) -> SequenceClassifierOutput:
        out = self.bert(input_ids, attention_mask, token_type_ids, position_ids,
                        output_attentions, output_hidden_states)
        logits = self.classifier(self.dropout(out.pooler_output))  # (B, num_labels)
        loss = None
        if labels is not None:
            if self.num_labels == 1:  # regression, as transformers does
                loss = F.mse_loss(logits.squeeze(-1), labels.to(logits.dtype))
            else:
                loss = F.cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss, logits, out.hidden_states, out.attentions)


class BertForTokenClassification(_ClassifierBase):
    """One label per token (tagging): a linear layer on every final hidden state."""

    def __init__(self, config: BertConfig):
        super().__init__(config, add_pooling_layer=False)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False) -> TokenClassifierOutput:
        out = self.bert(input_ids, attention_mask, token_type_ids, position_ids,
                        output_attentions, output_hidden_states)
        logits = self.classifier(self.dropout(out.last_hidden_state))  # (B, T, num_labels)
        loss = None
        if labels is not None:  # -100 marks positions without a label ([CLS], [SEP], padding, ## pieces)
            loss = F.cross_entropy(logits.reshape(-1, self.num_labels), labels.reshape(-1), ignore_index=IGNORE_INDEX)
        return TokenClassifierOutput(loss, logits, out.hidden_states, out.attentions)


class BertForQuestionAnswering(BertPreTrainedModel):
    """Extractive QA: a start logit and an end logit for every token; the answer is a span of the context."""

    def __init__(self, config: BertConfig):
        super().__init__(config.replace(num_labels=2) if config.num_labels != 2 else config)
        self.bert = BertModel(self.config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(self.config.hidden_size, 2)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None,
                start_positions=None, end_positions=None,
                output_attentions=False, output_hidden_states=False) -> QuestionAnsweringModelOutput:
        out = self.bert(input_ids, attention_mask, token_type_ids, position_ids,
                        output_attentions, output_hidden_states)
        logits = self.qa_outputs(out.last_hidden_state)  # (B, T, 2)
        start_logits, end_logits = logits.unbind(dim=-1)  # (B, T) each
        loss = None
        if start_positions is not None and end_positions is not None:
            T = start_logits.size(1)
            # Positions outside the sequence are ignored, as transformers does.
            start = start_positions.clamp(0, T)
            end = end_positions.clamp(0, T)
            loss = (F.cross_entropy(start_logits, start, ignore_index=T)
                    + F.cross_entropy(end_logits, end, ignore_index=T)) / 2
        return QuestionAnsweringModelOutput(loss, start_logits.contiguous(), end_logits.contiguous(),
                                            out.hidden_states, out.attentions)


def decode_span(
    start_logits: torch.Tensor,  # (T,)
    end_logits: torch.Tensor,  # (T,)
    context_mask: torch.Tensor | None = None,  # (T,) bool, True where the answer may be (the context tokens)
    max_answer_length: int = 30,
) -> tuple[int, int, float]:
    """The best valid span: argmax of start_logit[i] + end_logit[j] over i <= j < i + max_answer_length,
    both inside the context. Returns (start, end, score) with end inclusive."""
    if start_logits.dim() != 1 or start_logits.shape != end_logits.shape:
        raise ValueError("decode_span takes the 1-D start and end logits of one example, of equal length")
    if max_answer_length < 1:
        raise ValueError("max_answer_length must be at least 1")
    T = start_logits.size(0)
    if context_mask is None:
        context_mask = torch.ones(T, dtype=torch.bool, device=start_logits.device)
    context_mask = context_mask.bool()
    if not context_mask.any():
        raise ValueError("context_mask has no position where an answer could start")
    scores = start_logits[:, None] + end_logits[None, :]  # (T, T): row = start, column = end
    i = torch.arange(T, device=scores.device)
    length = i[None, :] - i[:, None]  # end - start
    valid = (length >= 0) & (length < max_answer_length)  # start <= end, bounded length
    valid &= context_mask[:, None] & context_mask[None, :]  # both ends inside the context
    scores = scores.masked_fill(~valid, float("-inf"))
    best = int(scores.argmax())
    start, end = divmod(best, T)
    return start, end, float(scores[start, end])
