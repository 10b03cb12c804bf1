"""leantrain's ``group_by_length`` sampler: length-grouped batches in random order, so every
prefix of a run is a fair sample of the data (issue 23)."""

import copy

import numpy as np
import pytest
import torch
from leantrain.llm import SFTTrainer
from leantrain.llm.sampling import LengthGroupedShuffledSampler, grouped_shuffled_indices
from transformers.trainer_pt_utils import get_length_grouped_indices

BATCH = 8
# 2,000 log-normal lengths: 31 complete windows of 8 batches, an incomplete one of 2 batches
LENGTHS = np.round(np.random.default_rng(0).lognormal(5.0, 0.6, 2000)).astype(int) + 1


def _leantrain(seed, window=8):
    return grouped_shuffled_indices(LENGTHS, BATCH, window, seed=seed)


def _transformers(seed):
    generator = torch.Generator().manual_seed(seed)
    return get_length_grouped_indices(LENGTHS.tolist(), BATCH, generator=generator)


def _random(seed):
    return np.random.default_rng(seed).permutation(len(LENGTHS)).tolist()


def _ks(sample, population):
    """Kolmogorov-Smirnov statistic: the largest gap between the two empirical CDFs."""
    sample, population = np.sort(sample), np.sort(population)
    xs = np.union1d(sample, population)
    cdf = [np.searchsorted(v, xs, side="right") / len(v) for v in (sample, population)]
    return float(np.max(np.abs(cdf[0] - cdf[1])))


@pytest.fixture(scope="module")
def orders():
    """Epoch orders (one row per seed) of leantrain's sampler with windows of 4, 8 and 16
    batches (16: an incomplete window of 10 batches placed at random), of random batches and of
    transformers' grouping."""
    seeds = range(1000)
    table = {w: np.array([_leantrain(s, w) for s in seeds]) for w in (4, 8, 16)}
    table["random"] = np.array([_random(s) for s in seeds])
    table["transformers"] = np.array([_transformers(s) for s in range(100)])
    return table


def _prefix_is_fair(orders, batches):
    """The first ``batches`` batches of each order against the data: their mean over the
    orders (seeds) is the data's (|z| < 4: unbiased), and their lengths pooled have the data's
    distribution (Kolmogorov-Smirnov < 0.05). One seed's prefix is a small sample either way."""
    prefix = LENGTHS[orders[:, : batches * BATCH]]
    means = prefix.mean(axis=1)
    z = (means.mean() - LENGTHS.mean()) / (means.std() / np.sqrt(len(means)))
    return abs(z) < 4 and _ks(prefix.ravel(), LENGTHS) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("batches", [3, 10, 30])
def test_every_prefix_is_a_fair_sample_of_the_lengths(orders, batches):
    for window in (4, 8, 16):
        assert _prefix_is_fair(orders[window], batches), window
    assert _prefix_is_fair(orders["random"], batches)
    # transformers' LengthGroupedSampler starts with the longest rows of a 50-batch megabatch
    assert not _prefix_is_fair(orders["transformers"], batches)


def test_whole_rounds_of_a_window_are_stratified(orders):
    # the first k*window batches hold k batches of every length band: one run's prefix is
    # closer to the data's mean than random batches' is
    def spread(orders, batches=16):
        return LENGTHS[orders[:, : batches * BATCH]].mean(axis=1).std() / LENGTHS.mean()

    assert spread(orders[8]) < 0.8 * spread(orders["random"])


def _padding(order):
    """Padding of batches of ``BATCH`` consecutive indices, each padded to its longest row."""
    batches = [LENGTHS[order[i : i + BATCH]] for i in range(0, len(order), BATCH)]
    return sum(int(b.max()) * len(b) - int(b.sum()) for b in batches)


def test_padding_is_much_lower_than_random_batches(orders):
    def padding(orders):
        return np.mean([_padding(order) for order in orders[:5]])

    assert padding(orders[8]) < 0.5 * padding(orders["random"])
    assert padding(orders[16]) < padding(orders[8]) < padding(orders[4])


@pytest.mark.parametrize("n", [0, 1, 7, 8, 63, 64, 65, 2000, 2003])
def test_each_index_once_and_batches_are_the_groups(n):
    lengths = LENGTHS[:n] if n <= len(LENGTHS) else np.resize(LENGTHS, n)
    order = grouped_shuffled_indices(lengths, BATCH, 8, seed=3)
    assert sorted(order) == list(range(n))
    # every BATCH-slice is a length band of its window; only the last may be short
    batches = [order[i : i + BATCH] for i in range(0, n, BATCH)]
    assert all(len(b) == BATCH for b in batches[:-1])


def test_same_seed_and_epoch_same_order_other_epoch_other_order():
    sampler = LengthGroupedShuffledSampler(LENGTHS, BATCH, seed=42)
    first = list(sampler)
    assert list(sampler) == first == _leantrain(42)
    assert list(LengthGroupedShuffledSampler(LENGTHS, BATCH, seed=42)) == first
    assert list(LengthGroupedShuffledSampler(LENGTHS, BATCH, seed=43)) != first
    sampler.set_epoch(1)
    second = list(sampler)
    assert second != first and sorted(second) == sorted(first)
    assert second == grouped_shuffled_indices(LENGTHS, BATCH, seed=42, epoch=1)
    assert len(sampler) == len(LENGTHS)


def test_accelerate_shards_whole_groups_across_processes():
    from accelerate.data_loader import BatchSamplerShard
    from torch.utils.data import BatchSampler

    sampler = LengthGroupedShuffledSampler(LENGTHS[:992], BATCH, seed=1)  # 124 batches
    whole = list(BatchSampler(sampler, BATCH, drop_last=False))
    shards = [
        list(BatchSamplerShard(BatchSampler(sampler, BATCH, drop_last=False), 2, rank))
        for rank in (0, 1)
    ]
    assert shards[0] == whole[0::2] and shards[1] == whole[1::2]


# -- through leantrain's SFTTrainer ----------------------------------------------------------


@pytest.fixture
def varied_rows():
    """24 prompt/completion rows whose proof states run from 1 to 24 hypotheses."""
    import datasets
    from leantrain.tactics import build_messages

    rows = []
    for i in range(24):
        state = "".join(f"h{j} : {j} < {j + 1}\n" for j in range((i * 7) % 24 + 1)) + "⊢ True"
        rows.append(
            {
                "prompt": build_messages(state),
                "completion": [{"role": "assistant", "content": "trivial"}],
            }
        )
    return datasets.Dataset.from_list(rows)


def _hf_trainer(tmp_path, rows, **kw):
    args = {"model_name": "tiny", "output_dir": tmp_path / "run", "batch_size": 3}
    t = SFTTrainer(**{**args, "evaluate_each_repo": False, **kw})
    config = copy.copy(t.config)
    config.output_dir = str(tmp_path / "work")
    return t._trl_trainer(rows, config, [])


def test_sft_trainer_uses_the_sampler_for_group_by_length(varied_rows, tmp_path):
    from accelerate import skip_first_batches
    from leantrain.llm.sampling import dataset_lengths
    from torch.utils.data import RandomSampler

    trainer = _hf_trainer(tmp_path, varied_rows, seed=7)
    assert trainer.args.train_sampling_strategy == "group_by_length"  # the default
    loader = trainer.get_train_dataloader()
    sampler = loader.batch_sampler.sampler
    assert isinstance(sampler, LengthGroupedShuffledSampler)
    assert (sampler.batch_size, sampler.window, sampler.seed) == (3, 8, 7)

    ids = trainer.train_dataset["input_ids"]
    lengths = dataset_lengths(trainer.train_dataset)
    assert lengths.tolist() == [len(x) for x in ids]
    loader.set_epoch(1)
    expected = grouped_shuffled_indices(lengths, 3, 8, seed=7, epoch=1)
    pad = trainer.processing_class.pad_token_id
    got = [[row[row != pad].tolist() for row in b["input_ids"]] for b in loader]
    assert got == [[ids[i] for i in expected[k : k + 3]] for k in range(0, len(expected), 3)]

    # a resumed epoch skips the batches already trained on and draws the same order
    skipped = skip_first_batches(loader, 3)
    skipped.set_epoch(1)
    assert [[row[row != pad].tolist() for row in b["input_ids"]] for b in skipped] == got[3:]

    random = _hf_trainer(tmp_path, varied_rows, train_sampling_strategy="random")
    assert isinstance(random.get_train_dataloader().batch_sampler.sampler, RandomSampler)


@pytest.mark.slow
def test_resumed_run_trains_on_the_batches_of_the_uninterrupted_one(varied_rows, tmp_path):
    def run():
        trainer = _hf_trainer(tmp_path, varied_rows, max_steps=12, save_steps=10, logging_steps=100)
        seen, collate = [], trainer.data_collator

        def recording(features):
            seen.append([tuple(f["input_ids"]) for f in features])
            return collate(features)

        trainer.data_collator = recording
        return trainer, seen

    trainer, whole = run()
    trainer.train()
    # 8 batches an epoch: checkpoint-10 is 2 batches into the second epoch, a new order
    # (accelerate's loader collates one batch ahead: a 13th, not trained on, may be recorded)
    assert len(whole) >= 12 and whole[8:12] != whole[:4]
    trainer, resumed = run()
    trainer.train(resume_from_checkpoint=str(tmp_path / "work" / "checkpoint-10"))
    assert resumed[:2] == whole[10:12] and resumed == whole[10:]


def test_window_must_be_positive(tmp_path):
    from leantrain.core.errors import ConfigError
    from leantrain.llm import SFTConfig

    with pytest.raises(ConfigError, match="length_group_window"):
        SFTConfig(output_dir=str(tmp_path), length_group_window=0)
    with pytest.raises(ValueError, match="window"):
        LengthGroupedShuffledSampler(LENGTHS, BATCH, window=0)
