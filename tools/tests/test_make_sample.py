"""The sample generator (leantrain_tools.make_sample) rewrites core's shipped sample byte for byte."""

from __future__ import annotations

from leantrain.core import sample_data_dir
from leantrain_tools import make_sample


def test_generator_reproduces_the_shipped_files(tmp_path):
    assert make_sample.OUT.resolve() == sample_data_dir().resolve()
    make_sample.main(tmp_path)
    shipped = sorted(
        p.relative_to(sample_data_dir()) for p in sample_data_dir().rglob("*") if p.is_file()
    )
    assert shipped == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for rel in shipped:
        assert (tmp_path / rel).read_bytes() == (sample_data_dir() / rel).read_bytes(), rel
