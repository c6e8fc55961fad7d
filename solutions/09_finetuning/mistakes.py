"""Named wrong answers to 09_finetuning, each losing the points of its part only (tests/test_exercises.py)."""

# The given __init__s; a mistake replaces the whole solution cell, so it repeats them.
_SEQUENCE = '''
class SequenceClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        out = self.bert(input_ids, attention_mask, token_type_ids)
        h = out.last_hidden_state
        {body}
'''
_TOKEN = '''
class TokenClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        h = self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state
        {body}
'''
_QA = '''
class QuestionAnswering(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        logits = self.qa_outputs(self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state)
        {body}
'''
# A span decoder written as a loop; each mistake drops one of its three conditions.
_SPAN = '''
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    T = len(start_logits)
    best, best_score = None, float("-inf")
    for i in range(T):
        for j in range(T):
            ok = {condition}
            score = float(start_logits[i] + end_logits[j])
            if ok and score > best_score:
                best, best_score = (i, j), score
    return best
'''
_ORDER = "i <= j"
_CONTEXT = "bool(context_mask[i]) and bool(context_mask[j])"
_LENGTH = "j - i + 1 <= max_answer_length"

MISTAKES = {
    "mean_vector_for_classification": {
        "why": "the classifier reads the pooled [CLS] vector, not the mean of all vectors",
        "cells": {"sequence": _SEQUENCE.format(body="return self.classifier(self.dropout(h.mean(dim=1)))")},
        "loses": ["test_sequence"],
    },
    "sep_vector_for_classification": {
        "why": "the classifier reads the pooled [CLS] vector, not the last position ([SEP] or [PAD])",
        "cells": {"sequence": _SEQUENCE.format(body="return self.classifier(self.dropout(h[:, -1]))")},
        "loses": ["test_sequence"],
    },
    "calls_bertlib_sequence_classifier": {
        "why": "wrapping bertlib's own model is not writing the head",
        "cells": {"sequence": _SEQUENCE.format(body=(
            "ref = bertlib.BertForSequenceClassification(self.bert.config)\n"
            "        ref.load_state_dict(self.state_dict(), strict=False)\n"
            "        return ref.eval()(input_ids, attention_mask, token_type_ids).logits"))},
        "loses": ["test_sequence"],
    },
    "cls_vector_for_every_token": {
        "why": "tagging reads each token's own vector; the [CLS] vector would tag every token alike",
        "cells": {"token": _TOKEN.format(
            body="return self.classifier(self.dropout(h[:, :1])).expand(-1, h.shape[1], -1)")},
        "loses": ["test_token"],
    },
    "start_end_swapped": {
        "why": "column 0 of qa_outputs is the start score, column 1 the end score",
        "cells": {"qa": _QA.format(body="end_logits, start_logits = logits.unbind(dim=-1)\n"
                                        "        return start_logits, end_logits")},
        "loses": ["test_qa"],
    },
    "span_end_before_start": {
        "why": "a span whose end comes before its start is no span",
        "cells": {"span": _SPAN.format(condition=f"{_CONTEXT} and {_LENGTH}")},
        "loses": ["test_span"],
    },
    "span_outside_context": {
        "why": "the answer lies in the context, never in the question or on a special token",
        "cells": {"span": _SPAN.format(condition=f"{_ORDER} and {_LENGTH}")},
        "loses": ["test_span"],
    },
    "span_length_unbounded": {
        "why": "without max_answer_length two far-apart peaks make a span of half the document",
        "cells": {"span": _SPAN.format(condition=f"{_ORDER} and {_CONTEXT}")},
        "loses": ["test_span"],
    },
    "no_dropout_sequence": {
        "why": "self.dropout belongs where the pooled vector enters the classifier (it acts in train() mode)",
        "cells": {"sequence": _SEQUENCE.format(body="return self.classifier(out.pooler_output)")},
        "loses": ["test_sequence"],
    },
    "no_dropout_token": {
        "why": "self.dropout belongs where every token's vector enters the classifier (it acts in train() mode)",
        "cells": {"token": _TOKEN.format(body="return self.classifier(h)")},
        "loses": ["test_token"],
    },
    "token_logits_zeroed_at_padding": {
        "why": "the head scores padding positions too; the loss skips them through labels of -100",
        "cells": {"token": _TOKEN.format(body="return self.classifier(self.dropout(h)) * attention_mask[:, :, None]")},
        "loses": ["test_token"],
    },
    "qa_logits_zeroed_at_padding": {
        "why": "the start and end logits of padding positions are the head's output too; decoding skips them",
        "cells": {"qa": _QA.format(body="start_logits, end_logits = logits.unbind(dim=-1)\n"
                                        "        return start_logits * attention_mask, end_logits * attention_mask")},
        "loses": ["test_qa"],
    },
    "span_returns_tensors": {
        "why": "best_span returns two Python ints, not 0-dimensional tensors",
        "cells": {"span": '''
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    T = start_logits.shape[0]
    scores = start_logits[:, None] + end_logits[None, :]
    i = torch.arange(T)
    length = i[None, :] - i[:, None] + 1
    valid = (length >= 1) & (length <= max_answer_length) & context_mask[:, None] & context_mask[None, :]
    best = scores.masked_fill(~valid, float("-inf")).argmax()
    return best // T, best % T
'''},
        "loses": ["test_span"],
    },
}
