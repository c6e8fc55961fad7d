"""course/verdicts.py: how a page prints a comparison over seeds."""
from course.verdicts import bracket, interval, said


def _cmp(difference, low, high, verdict="larger"):
    return {"difference": difference, "low": low, "high": high, "confidence": 0.95, "n": 3, "verdict": verdict}


def test_an_interval_prints_its_ends_at_three_digits():
    assert interval(_cmp(0.125, 0.05, 0.2)) == "+0.125 (95% interval +0.050 to +0.200, 3 seeds)"


def test_a_nonzero_end_is_never_printed_as_zero():
    # a lower end of 0.0004 decides the verdict "larger"; "+0.000" would read as an interval touching zero
    text = interval(_cmp(0.01, 0.0004, 0.02))
    assert "+0.0004 to +0.020" in text
    assert "-0.00003" in interval(_cmp(0.01, -0.00003, 0.02, "no difference"))
    assert "+0.000 to" in interval(_cmp(0.01, 0.0, 0.02, "no difference"))  # an end that is zero stays zero


def test_said_follows_the_verdict():
    assert said(_cmp(0, 0, 0, "no difference"), "up", "down", "same") == "same"
    assert said(_cmp(0, 0, 0, "smaller"), "up", "down", "same") == "down"


def test_a_table_cell_gives_the_difference_and_its_interval_in_brackets():
    assert bracket(_cmp(0.125, 0.0004, 0.2)) == "+0.125 [+0.0004, +0.200]"
