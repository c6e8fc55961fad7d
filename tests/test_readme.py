"""The README's code runs and its asserted figure is right."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "the README has no python example"
    scope: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    assert scope["count_parameters"](scope["cfg"])["total"] == 109_482_240
    assert tuple(scope["out"].last_hidden_state.shape) == (1, 16, 384)
    assert tuple(scope["out"].pooler_output.shape) == (1, 384)


# --- the README's result figures against the last book build ------------------------------------------------
# Each phrase of the README's results, written with the glue keys of the chapter that computes it: pretrain_* are
# chapter 11's (the default run, the fine-tunings), exp_* chapter 12's (the experiments, the few-label runs).
# A key the last build did not record (a build older than the key) matches anything, so the phrase is
# checked on what that build has; a key it recorded must match to the printed precision. Wall-clock keys
# (WALL_CLOCK) are the machine's, not the code's: CI's build ran the default pretraining in 212 s where this
# machine's took 253 s, so the README's time must be a whole number of seconds and is not compared.
RESULT_PHRASES = [
    "| MLM top-1 {pretrain_mlm_accuracy:.3f}, NSP {pretrain_nsp_accuracy:.3f} | {pretrain_mlm_unigram_baseline:.3f} (always "
    "{pretrain_top_token}), {pretrain_nsp_majority_baseline:.3f} (majority) | {pretrain_seconds:.0f} s |",
    "| `docstring_topics`, accuracy | majority {pretrain_base_docstring_topics_majority:.3f}, bag of words "
    "{pretrain_base_docstring_topics_bag_of_words:.3f} | {pretrain_ft_docstring_topics_scratch:.3f} | "
    "{pretrain_ft_docstring_topics_pre:.3f} | |",
    "| `docstring_topics` with {exp_few} labels, accuracy ({exp_few_n} seeds) | | | {exp_few_tiny:.3f} | "
    "{exp_few_minilm:.3f} |",
    "| `code_spans`, span F1 | all O {pretrain_base_code_spans_all_O:.3f}, word lookup "
    "{pretrain_base_code_spans_word_lookup:.3f} | {pretrain_ft_code_spans_scratch:.3f} | {pretrain_ft_code_spans_pre:.3f} | |",
    "| `function_qa` ({pretrain_qa_train:,} training questions), exact match | first entry "
    "{pretrain_base_function_qa_first_entry:.3f}, word overlap "
    "{pretrain_qa_overlap:.3f} | {pretrain_ft_function_qa_scratch:.3f} | {pretrain_ft_function_qa_pre:.3f} | |",
    "{pretrain_ft_epochs} epochs on the topics and the code spans; MiniLM with the paper's learning rate "
    "{exp_minilm_lr:g} and batch {exp_minilm_batch}, but {exp_few_epochs} epochs over its {exp_few} labels)",
    "bidirectional {exp_e1_bi_right:.3f} against causal {exp_e1_causal_right:.3f} (chance {exp_e1_chance:.3f})",
    "80/10/10 against 100% `[MASK]`, same steps: MLM {exp_e2_masked_a:.3f} / {exp_e2_masked_b:.3f}, `code_spans` "
    "F1 fine-tuned {exp_e2_fine_tuned_a:.3f} / {exp_e2_fine_tuned_b:.3f}, feature-based "
    "{exp_e2_feature_based_a:.3f} / {exp_e2_feature_based_b:.3f} (no pretraining {exp_e2_untrained:.3f}, "
    "word lookup {exp_e2_lookup:.3f}); at matched MLM skill 80/10/10 names the visible piece "
    "{exp_e2_copy_matched_a:.3f} of the time on clean input against {exp_e2_copy_matched_b:.3f}",
    "held-out MLM {exp_e3_5:.3f} / {exp_e3_15:.3f} / {exp_e3_25:.3f} / {exp_e3_40:.3f}",
    "MLM + NSP {exp_e4_nsp:.3f} against MLM only {exp_e4_mlm:.3f}",
    "a pair task NSP's topic shortcut cannot answer, {exp_e4_restate_nsp:.3f} against {exp_e4_restate_mlm:.3f}",
    "with {exp_e5_small} labels pretrained {exp_e5_pre_small:.3f} against scratch {exp_e5_scr_small:.3f}, with "
    "{exp_e5_large} labels {exp_e5_pre_large:.3f} against {exp_e5_scr_large:.3f}",
]
WALL_CLOCK = {"pretrain_seconds"}
BUILD = README.parent / "_build" / "jupyter_execute" / "chapters"
FIELD = re.compile(r"\{(\w+)(?::([^}]*))?\}")


def recorded_figures(path: Path) -> dict:
    """The values a build glued (myst-nb's NAME.glue.json): numbers as numbers, Markdown as its text."""
    import ast
    import json

    out = {}
    for key, output in json.loads(path.read_text(encoding="utf-8")).items():
        data = output.get("data", {})
        if "text/markdown" in data:
            out[key] = data["text/markdown"]
            continue
        try:
            out[key] = ast.literal_eval(data.get("text/plain", ""))
        except (ValueError, SyntaxError):
            continue
    return out


def phrase_pattern(phrase: str, figures: dict) -> tuple[re.Pattern, list[str]]:
    """A regex for the phrase: recorded keys rendered, unrecorded ones free. Returns it and the free keys."""
    parts, free, pos = [], [], 0
    for m in FIELD.finditer(phrase):
        parts.append(re.escape(phrase[pos:m.start()]))
        key, spec = m.group(1), m.group(2) or ""
        if key in WALL_CLOCK:
            parts.append(r"\d+")
        elif key in figures:
            parts.append(re.escape(format(figures[key], spec)))
        else:
            parts.append(r"[^|]*?")
            free.append(key)
        pos = m.end()
    parts.append(re.escape(phrase[pos:]))
    return re.compile("".join(parts)), free


def readme_mismatches(readme_text: str, figures: dict) -> list[str]:
    flat = " ".join(readme_text.split())
    bad = []
    for phrase in RESULT_PHRASES:
        pattern, _ = phrase_pattern(" ".join(phrase.split()), figures)
        if not pattern.search(flat):
            bad.append(FIELD.sub(lambda m: format(figures[m.group(1)], m.group(2) or "")
                                 if m.group(1) in figures and m.group(1) not in WALL_CLOCK else m.group(0), phrase))
    return bad


@pytest.mark.book
def test_readme_results_match_the_last_book_build():
    """README's pretraining, fine-tuning and experiment figures are those the last book build recorded."""
    pages = [sorted(BUILD.glob(f"*_{topic}.glue.json")) for topic in ("pretraining", "experiments")]
    if not all(pages):
        pytest.fail("no book build here (_build/jupyter_execute): run `make book` first (`make check` does)")
    figures = {**recorded_figures(pages[0][-1]), **recorded_figures(pages[1][-1])}
    assert "pretrain_mlm_accuracy" in figures, f"{pages[0][-1]} holds no pretraining figures"
    assert "exp_e1_bi_right" in figures, f"{pages[1][-1]} holds no experiment figures"
    bad = readme_mismatches(README.read_text(encoding="utf-8"), figures)
    assert not bad, ("README.md disagrees with the last book build; with that build's figures it would read:\n"
                     + "\n".join(bad))


def test_the_readme_check_catches_a_drift():
    """The comparison itself: a changed figure is caught, an unrecorded key is free, formats are applied."""
    text = "| MLM top-1 0.289, NSP 0.674 | 0.044 (always `.`), 0.528 (majority) | 211 s |"
    figures = {"pretrain_mlm_accuracy": 0.28935, "pretrain_nsp_accuracy": 0.67385, "pretrain_mlm_unigram_baseline": 0.04388,
               "pretrain_top_token": "`.`", "pretrain_nsp_majority_baseline": 0.52830, "pretrain_seconds": 211.2}
    assert phrase_pattern(" ".join(RESULT_PHRASES[0].split()), figures)[0].search(text)
    assert not phrase_pattern(" ".join(RESULT_PHRASES[0].split()), {**figures, "pretrain_nsp_accuracy": 0.671})[0].search(text)
    # a build's wall-clock time is its machine's: another time still matches, a missing one does not
    assert phrase_pattern(" ".join(RESULT_PHRASES[0].split()), {**figures, "pretrain_seconds": 353.0})[0].search(text)
    assert not phrase_pattern(" ".join(RESULT_PHRASES[0].split()), figures)[0].search(text.replace("211 s", "s"))
    pattern, free = phrase_pattern(" ".join(RESULT_PHRASES[0].split()), {k: v for k, v in figures.items()
                                                                         if k != "pretrain_top_token"})
    assert free == ["pretrain_top_token"] and pattern.search(text)
