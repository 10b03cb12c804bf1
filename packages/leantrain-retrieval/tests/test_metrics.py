import pytest
from leantrain.retrieval import recall_at_k, reciprocal_rank, retrieval_metrics


def test_recall_is_fraction_of_positives_in_top_k():
    ranking = ["a", "b", "c", "d", "e"]
    assert recall_at_k(ranking, {"a"}, 1) == 1.0
    assert recall_at_k(ranking, {"b", "e"}, 1) == 0.0
    assert recall_at_k(ranking, {"b", "e"}, 2) == 0.5
    assert recall_at_k(ranking, {"b", "e", "z"}, 10) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        recall_at_k(ranking, set(), 1)


def test_reciprocal_rank_of_first_positive():
    assert reciprocal_rank(["a", "b", "c"], {"c", "b"}) == 0.5
    assert reciprocal_rank(["a", "b", "c"], {"a"}) == 1.0
    assert reciprocal_rank(["a", "b", "c"], {"z"}) == 0.0


def test_averages_skip_tactics_without_positives():
    rankings = [
        (["p1", "x", "y"], {"p1"}),  # R@1 1, R@10 1, RR 1
        (["x", "p2", "p3"], {"p2", "p3", "p4"}),  # R@1 0, R@10 2/3, RR 1/2
        (["x", "y"], set()),  # ignored, as in ReProver
        (["x", "y", "z"], {"q"}),  # R@1 0, R@10 0, RR 0
    ]
    m = retrieval_metrics(rankings, ks=(1, 10))
    assert m["count"] == 3
    assert m["R@1"] == pytest.approx(1 / 3)
    assert m["R@10"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert m["MRR"] == pytest.approx((1 + 0.5 + 0) / 3)


def test_r1_counts_only_one_of_several_positives():
    # ReProver: R@1 = (first is positive) / |positives|, so it is at most 1/|positives|
    m = retrieval_metrics([(["a", "b"], {"a", "b"})], ks=(1, 10))
    assert m["R@1"] == 0.5 and m["R@10"] == 1.0 and m["MRR"] == 1.0
