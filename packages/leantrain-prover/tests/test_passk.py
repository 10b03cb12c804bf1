"""pass@k arithmetic on hand-made attempts."""

import pytest
from leantrain.prover.passk import pass_at_k, pass_at_k_table


def test_pass_at_k_hand_values():
    assert pass_at_k(4, 0, 1) == 0.0
    assert pass_at_k(4, 4, 1) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(4, 1, 4) == 1.0
    # 1 - C(8,4)/C(10,4) = 1 - 70/210
    assert pass_at_k(10, 2, 4) == pytest.approx(2 / 3)


def test_table_averages_over_theorems_and_defaults_ks():
    table = pass_at_k_table({"a": [False, True, False, False], "b": [False] * 4, "c": [True] * 4})
    assert list(table) == ["pass@1", "pass@2", "pass@4"]
    assert table["pass@1"] == pytest.approx((0.25 + 0 + 1) / 3)
    assert table["pass@2"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert table["pass@4"] == pytest.approx(2 / 3)
    assert pass_at_k_table({"a": [True, False, False]}) == pytest.approx(
        {"pass@1": 1 / 3, "pass@2": 2 / 3, "pass@3": 1.0}
    )


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="different attempt counts"):
        pass_at_k_table({"a": [True], "b": [True, False]})
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(2, 3, 1)
    assert pass_at_k_table({}) == {}
