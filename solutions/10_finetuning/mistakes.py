"""Named wrong answers to 10_finetuning, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook.
A mistake replaces the whole solution cell, so it repeats the given __init__; the span mistakes
repeat one decoder written as a loop, each without one of its three conditions."""


# %% mean_vector_for_classification cell=sequence loses=test_sequence
# why: the classifier reads the pooled [CLS] vector, not the mean of all vectors
class SequenceClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        out = self.bert(input_ids, attention_mask, token_type_ids)
        h = out.last_hidden_state
        return self.classifier(self.dropout(h.mean(dim=1)))


# %% sep_vector_for_classification cell=sequence loses=test_sequence
# why: the classifier reads the pooled [CLS] vector, not the last position ([SEP] or [PAD])
class SequenceClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        out = self.bert(input_ids, attention_mask, token_type_ids)
        h = out.last_hidden_state
        return self.classifier(self.dropout(h[:, -1]))


# %% calls_bertlib_sequence_classifier cell=sequence loses=test_sequence
# why: wrapping bertlib's own model is not writing the head
class SequenceClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        ref = bertlib.BertForSequenceClassification(self.bert.config)
        ref.load_state_dict(self.state_dict(), strict=False)
        return ref.eval()(input_ids, attention_mask, token_type_ids).logits


# %% cls_vector_for_every_token cell=token loses=test_token
# why: tagging reads each token's own vector; the [CLS] vector would tag every token alike
class TokenClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        h = self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state
        return self.classifier(self.dropout(h[:, :1])).expand(-1, h.shape[1], -1)


# %% start_end_swapped cell=qa loses=test_qa
# why: column 0 of qa_outputs is the start score, column 1 the end score
class QuestionAnswering(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        logits = self.qa_outputs(self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state)
        end_logits, start_logits = logits.unbind(dim=-1)
        return start_logits, end_logits


# %% span_end_before_start cell=span loses=test_span
# why: a span whose end comes before its start is no span
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    T = len(start_logits)
    best, best_score = None, float("-inf")
    for i in range(T):
        for j in range(T):
            ok = bool(context_mask[i]) and bool(context_mask[j]) and j - i + 1 <= max_answer_length
            score = float(start_logits[i] + end_logits[j])
            if ok and score > best_score:
                best, best_score = (i, j), score
    return best


# %% span_outside_context cell=span loses=test_span
# why: the answer lies in the context, never in the question or on a special token
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    T = len(start_logits)
    best, best_score = None, float("-inf")
    for i in range(T):
        for j in range(T):
            ok = i <= j and j - i + 1 <= max_answer_length
            score = float(start_logits[i] + end_logits[j])
            if ok and score > best_score:
                best, best_score = (i, j), score
    return best


# %% span_length_unbounded cell=span loses=test_span
# why: without max_answer_length two far-apart peaks make a span of half the document
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    T = len(start_logits)
    best, best_score = None, float("-inf")
    for i in range(T):
        for j in range(T):
            ok = i <= j and bool(context_mask[i]) and bool(context_mask[j])
            score = float(start_logits[i] + end_logits[j])
            if ok and score > best_score:
                best, best_score = (i, j), score
    return best


# %% no_dropout_sequence cell=sequence loses=test_sequence
# why: self.dropout belongs where the pooled vector enters the classifier (it acts in train() mode)
class SequenceClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        out = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(out.pooler_output)


# %% no_dropout_token cell=token loses=test_token
# why: self.dropout belongs where every token's vector enters the classifier (it acts in train() mode)
class TokenClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        h = self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state
        return self.classifier(h)


# %% token_logits_zeroed_at_padding cell=token loses=test_token
# why: the head scores padding positions too; the loss skips them through labels of -100
class TokenClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        h = self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state
        return self.classifier(self.dropout(h)) * attention_mask[:, :, None]


# %% qa_logits_zeroed_at_padding cell=qa loses=test_qa
# why: the start and end logits of padding positions are the head's output too; decoding skips them
class QuestionAnswering(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        logits = self.qa_outputs(self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state)
        start_logits, end_logits = logits.unbind(dim=-1)
        return start_logits * attention_mask, end_logits * attention_mask


# %% span_returns_tensors cell=span loses=test_span
# why: best_span returns two Python ints, not 0-dimensional tensors
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    T = start_logits.shape[0]
    scores = start_logits[:, None] + end_logits[None, :]
    i = torch.arange(T)
    length = i[None, :] - i[:, None] + 1
    valid = (length >= 1) & (length <= max_answer_length) & context_mask[:, None] & context_mask[None, :]
    best = scores.masked_fill(~valid, float("-inf")).argmax()
    return best // T, best % T


# %% bert_under_no_grad cell=sequence loses=test_sequence
# why: under torch.no_grad() no gradient reaches BERT: only the classifier would be fine-tuned
class SequenceClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        with torch.no_grad():  # BERT is pretrained already
            out = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.dropout(out.pooler_output))


# %% token_bert_switched_to_eval cell=token loses=test_token
# why: self.bert.eval() in forward switches BERT's dropout off for good, while the caller trains the model
class TokenClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        self.bert.eval()  # the pretrained encoder runs as it was trained
        out = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.dropout(out.last_hidden_state))


# %% qa_freezes_bert cell=qa loses=test_qa
# why: turning off requires_grad inside forward freezes BERT behind the caller's back: fine-tuning trains it all
class QuestionAnswering(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        self.bert.requires_grad_(False)  # keep the pretrained weights, train the head
        logits = self.qa_outputs(self.bert(input_ids, attention_mask, token_type_ids).last_hidden_state)
        return logits[..., 0], logits[..., 1]


# %% span_fills_callers_logits cell=span loses=test_span
# why: masked_fill_ writes -inf into the caller's logits: the model's scores are gone after decoding
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    start_logits.masked_fill_(~context_mask, float("-inf"))  # outside the context: never chosen
    end_logits.masked_fill_(~context_mask, float("-inf"))
    best, span = float("-inf"), (0, 0)
    T = len(start_logits)
    for s in range(T):
        for e in range(s, min(T, s + max_answer_length)):
            score = float(start_logits[s] + end_logits[e])
            if score > best:
                best, span = score, (s, e)
    return span
