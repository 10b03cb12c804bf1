import logging

import numpy as np
import pytest
from leantrain.core.errors import DataError
from leantrain.core.schemas import CorpusFile, load_theorems
from leantrain.retrieval import Corpus, load_examples
from leantrain.retrieval.examples import examples_from_theorems


def _file(path, imports, names):
    return CorpusFile.model_validate(
        {
            "path": path,
            "imports": imports,
            "premises": [
                {
                    "full_name": n,
                    "code": f"theorem {n} : True",
                    "start": [10 * i + 1, 1],
                    "end": [10 * i + 5, 1],
                }
                for i, n in enumerate(names)
            ],
        }
    )


@pytest.fixture
def diamond():
    # Base <- Left, Base <- Right, Left + Right <- Top (a diamond); Lone imports nothing
    return Corpus(
        [
            _file("Base.lean", [], ["base1", "base2"]),
            _file("Left.lean", ["Base.lean"], ["left1"]),
            _file("Right.lean", ["Base.lean"], ["right1"]),
            _file("Top.lean", ["Left.lean", "Right.lean"], ["top1", "top2", "top3"]),
            _file("Lone.lean", [], ["lone1"]),
        ]
    )


def names(corpus, ids):
    return sorted(corpus.premises[i].full_name for i in ids)


def test_diamond_imports_each_premise_once(diamond):
    acc = diamond.accessible_ids("Top.lean", None)
    assert names(diamond, acc) == ["base1", "base2", "left1", "right1", "top1", "top2", "top3"]
    assert len(acc) == len(set(acc.tolist()))


def test_file_importing_nothing_sees_only_its_earlier_premises(diamond):
    assert names(diamond, diamond.accessible_ids("Lone.lean", (100, 1))) == ["lone1"]
    assert names(diamond, diamond.accessible_ids("Lone.lean", (1, 1))) == []
    assert names(diamond, diamond.accessible_ids("Base.lean", (6, 1))) == ["base1"]


def test_same_file_premises_only_before_the_theorem(diamond):
    # top1 ends at line 5, top2 at line 15: a theorem at line 12 sees top1 but not top2
    got = names(diamond, diamond.accessible_ids("Top.lean", (12, 1)))
    assert "top1" in got and "top2" not in got and "base1" in got
    mask = diamond.accessible_mask("Left.lean", (1, 1))
    assert names(diamond, np.flatnonzero(mask)) == ["base1", "base2"]


def test_import_cycle_is_a_clear_error():
    with pytest.raises(
        DataError, match=r"import cycle: .*A\.lean -> B\.lean -> C\.lean -> A\.lean|import cycle"
    ):
        Corpus(
            [
                _file("A.lean", ["C.lean"], ["a"]),
                _file("B.lean", ["A.lean"], ["b"]),
                _file("C.lean", ["B.lean"], ["c"]),
            ],
            source="corpus.jsonl",
        )


def test_empty_corpus_is_a_clear_error(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"path": "A.lean", "imports": [], "premises": []}\n')
    with pytest.raises(DataError, match="no premises"):
        Corpus.from_jsonl(p)


def test_premise_missing_from_corpus_names_the_record(tmp_path, synthetic_export):
    corpus = Corpus.from_export(synthetic_export)
    thms = load_theorems(synthetic_export / "random" / "train.json")
    thms[3].traced_tactics[0].annotated_tactic[1][0].full_name = "Nope.missing"
    with pytest.raises(DataError) as e:
        examples_from_theorems(thms, corpus, source="train.json")
    msg = str(e.value)
    assert "Nope.missing" in msg and "record 3" in msg and "annotated_tactic" in msg
    assert len(examples_from_theorems(thms, corpus, strict=False)) == len(thms) - 1


def test_examples_map_annotations_to_corpus(synthetic_export):
    corpus = Corpus.from_export(synthetic_export)
    exs = load_examples(synthetic_export / "random" / "train.json", corpus)
    assert exs and all(len(e.positives) == 1 for e in exs)
    ex = exs[0]
    prem = corpus.premises[ex.positives[0]]
    assert prem.full_name.split(".")[-1].rsplit("_", 1)[0] in ex.context


def test_corpus_from_annotations_when_no_corpus_jsonl(shared_data, caplog):
    with caplog.at_level(logging.INFO, logger="leantrain.retrieval"):
        corpus = Corpus.from_export(shared_data / "lean4-example")
    assert "no corpus.jsonl" in caplog.text
    assert not corpus.imports_known
    assert corpus.find("Nat.mul_comm") is not None
    assert len(corpus) == 8  # the README: 8 distinct premises
    assert len(corpus.accessible_ids("Lean4Example.lean", (1, 1))) == len(corpus)


def test_corpus_from_benchmark_annotations(shared_data):
    corpus = Corpus.from_export(shared_data / "leandojo-benchmark-4-head")
    assert len(corpus) == 1576  # distinct annotated premises, per the data README


def test_missing_or_empty_export_dir_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="export directory not found"):
        Corpus.from_export(tmp_path / "nowhere")
    with pytest.raises(DataError, match=r"no corpus\.jsonl and no split files"):
        Corpus.from_export(tmp_path)


# -- known vs unknown imports (issue 10: an annotation-built corpus is not "imports nothing") ----
def _write_jsonl(path, files):
    import json

    path.write_text("".join(json.dumps(f) + "\n" for f in files), encoding="utf-8")
    return path


def _line(path, imports, names, **extra):
    return {**_file(path, imports, names).to_json(), **extra}


def test_known_imports_make_only_imported_files_reachable(diamond):
    # Left imports Base: Base's premises and its own earlier ones, never Right, Top or Lone
    got = names(diamond, diamond.accessible_ids("Left.lean", (100, 1)))
    assert got == ["base1", "base2", "left1"]
    assert diamond.imports_known and not diamond.imports_unknown("Left.lean")
    right = diamond.find("right1")
    assert not diamond.is_accessible(right, "Left.lean", (100, 1))
    assert diamond.is_accessible(diamond.find("base2"), "Left.lean", (1, 1))


def test_unknown_imports_make_everything_outside_the_file_reachable(tmp_path):
    path = _write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            _line("A.lean", [], ["a1", "a2"]),  # known: imports nothing
            _line("U.lean", [], ["u1", "u2"], imports_known=False),
            _line("B.lean", ["U.lean"], ["b1"]),  # imports a file whose imports are unknown
            _line("C.lean", [], ["c1"]),
        ],
    )
    corpus = Corpus.from_jsonl(path)
    assert corpus.unknown_imports == {"U.lean"} and not corpus.imports_known
    # U sees every premise of every other file, and only its own that end before the position
    assert names(corpus, corpus.accessible_ids("U.lean", (12, 1))) == [
        "a1", "a2", "b1", "c1", "u1",
    ]  # fmt: skip
    assert names(corpus, corpus.accessible_ids("U.lean", None)) == sorted(
        p.full_name for p in corpus.premises
    )
    # what B sees through U is unknown too: everything outside B
    assert corpus.imports_unknown("B.lean")
    assert names(corpus, corpus.accessible_ids("B.lean", (1, 1))) == ["a1", "a2", "c1", "u1", "u2"]
    # a file with known imports that reach no unknown file keeps the strict rule
    assert names(corpus, corpus.accessible_ids("A.lean", (100, 1))) == ["a1", "a2"]
    for path_, pos in (("U.lean", (12, 1)), ("B.lean", (1, 1)), ("A.lean", (12, 1))):
        mask = corpus.accessible_mask(path_, pos)
        assert np.flatnonzero(mask).tolist() == corpus.accessible_ids(path_, pos).tolist()
        assert [corpus.is_accessible(i, path_, pos) for i in range(len(corpus))] == mask.tolist()


def test_annotation_corpus_keeps_a_files_later_premises_out(tmp_path):
    thm = {
        "url": "u",
        "commit": "c",
        "file_path": "F.lean",
        "full_name": "t",
        "start": [20, 1],
        "end": [22, 1],
        "traced_tactics": [
            {
                "tactic": "simp",
                "annotated_tactic": [
                    "simp",
                    [
                        {"full_name": n, "def_path": p, "def_pos": [ln, 1], "def_end_pos": [ln, 9]}
                        for n, p, ln in (
                            ("f1", "F.lean", 5),
                            ("f2", "F.lean", 30),
                            ("g", "G.lean", 50),
                        )
                    ],
                ],
                "state_before": "⊢ True",
                "state_after": "no goals",
            }
        ],
    }
    from leantrain.core.schemas import Theorem

    corpus = Corpus.from_annotations([Theorem.model_validate(thm)])
    assert names(corpus, corpus.accessible_ids("F.lean", (20, 1))) == ["f1", "g"]
