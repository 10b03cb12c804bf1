#!/usr/bin/env bash
# leantrain on one GPU in at most 10 minutes: SFT (full and LoRA) and GRPO on a 0.5B-class
# causal LM in bf16, and the ByT5-small-shaped premise retriever; prints throughput (tokens/s,
# rows/s), MFU, peak CUDA memory and held-out metrics. Run it whenever a GPU is lent and record
# the figures; nothing in CI needs it.
#
#   bash tools/bench/gpu.sh               # on the GPU machine (≤ 10 min, every stage time-boxed)
#   bash tools/bench/gpu.sh --cpu-smoke   # here: tiny sizes, a few steps, on the CPU (all stages;
#                                         # 10 min on the shared 2-core machine, mostly Python starts)
#   bash tools/bench/gpu.sh --prepare     # here, once, before a GPU run: see "Prerequisites"
#                                         # (written, not yet exercised)
#   bash tools/bench/gpu.sh --verl        # the VERL stage alone (below); without a GPU it stops
#                                         # after `leantrain verl train --dry-run`
#
# What it runs — leantrain's own commands, each in-process under tools/bench/gpu_bench.py, which
# times the optimizer steps, counts the tokens the model trained on and reads
# torch.cuda.max_memory_allocated:
#   1. `leantrain export import` + `export merge` of ../shared/data's LB4 head (1,751 tactics);
#   2. a random-init LM with Qwen2.5-0.5B's shape (~494M parameters, Llama architecture) and
#      leantrain's character-level `tiny` tokenizer, and a random-init ByT5-small encoder
#      (~218M) with ByT5Tokenizer() — built from configs, since the GPU machine has no internet
#      and only 64 MiB travel with the working tree, so real weights cannot reach it;
#   3. `leantrain llm eval` (held-out LB4 test rows: completion-only loss, top-k) before;
#   4. `leantrain sft` full fine-tuning, bf16 (leantrain's default on a bf16 GPU), then eval;
#   5. `leantrain sft --use_lora true`, then eval;
#   6. `leantrain grpo` from the SFT model (format + no_sorry rewards), then eval — on random
#      weights both rewards are often constant across a group (zero advantage, zero loss): the
#      GRPO row measures generation + training throughput and memory, not learning;
#   7. `leantrain retrieval train` (ByT5-small shape, bf16-mixed; R@1/R@10/MRR on LB4 test);
#   8. `leantrain prove --engine hf`, then `--engine vllm` (GPU mode only; needs vLLM importable
#      by that Python — it is no leantrain dependency, so install it in the image or point
#      $LEANTRAIN_PYTHON at one that has it; without it the stage is one error line): the SFT
#      model, beam k = 8, 20 LB4 test theorems, replay backend; each summary (proof rate,
#      generator seconds) in logs/prove-*.out. Not yet run: no GPU was lent when it was added.
# Held-out metrics of random-init models measure that the pipeline trains and evaluates end to
# end (the loss should fall), not model quality: no pretrained weights can reach the machine.
#
# MFU = 6·N·tokens/s-style model FLOPs (PaLM's formula with the attention term; 2x forward for
# LoRA) ÷ the GPU's dense bf16 peak, looked up from its name (H100 SXM / H200: 989.4 TFLOP/s;
# H100 PCIe: 756) — the table says which peak was assumed; GPU_PEAK_TFLOPS overrides it.
# Throughput is over the optimizer steps after the first (warm-up excluded).
#
# Time box: a deadline of GPU_BENCH_BUDGET_S (default 570 s) from the start; each stage runs
# under `timeout` for min(its own cap, what is left) and is skipped when under 20 s are left, so
# the whole run ends inside 10 minutes even when a stage hangs. Step counts are sized for an
# H100 (estimates, not yet measured: no GPU was lent when this script was written, so no GPU
# figures exist yet). Rows are tokenized per character (the `tiny` tokenizer), max_length 2048.
#
# Prerequisites (the GPU machine cannot reach any registry):
#   * a Python with leantrain and its locked dependencies. Tried in this order:
#     1. $LEANTRAIN_PYTHON (an interpreter where `import leantrain.llm, leantrain.retrieval` works);
#     2. `uv run --locked --offline` (a synced .venv of this checkout, or a warm uv cache);
#     3. the device image's python3 plus wheels in .gpu-bench/wheels/: `bash tools/bench/gpu.sh
#        --prepare` (run here, with registry access) builds leantrain's own wheels and downloads
#        the locked versions of the packages that image lacks (trl, datasets, pydantic, …; a few
#        MiB), and copies the LB4 head data into .gpu-bench/data/. Then run with the device
#        tool's carry [".gpu-bench"]. The image's torch/transformers versions differ from
#        uv.lock's; a version conflict shows up as a failed first stage.
#   * the LB4 head: $LEANTRAIN_DATA, ../shared/data, shared/data or .gpu-bench/data (the first
#     that holds leandojo-benchmark-4-head/test_head.json).
# The VERL stage (--verl; issue 37; written for the day a GPU is lent — no VERL GPU run is
# recorded yet): `leantrain verl train --algorithm grpo` with LoRA (rank 16) on a random-init
# LM of Qwen2.5-0.5B's shape (the `build-lm` above), the shipped sample export, 3 steps of 8
# prompts × 4 responses on one GPU, vLLM rollouts, and the Lean reward (the YAML's `verifier:`
# section) against leantrain-lean's stand-in REPL (tests/fake_repl.py, which answers only its
# recorded transcripts: the stage checks the wiring and measures throughput, not learning).
# It runs in .venv-verl ($LEANTRAIN_VERL_PYTHON, else .venv-verl/bin/python), which needs vLLM
# there (`pip install 'verl[vllm]'`; not in uv.lock). Output: VERL's console log, the merged
# model, and `verl.log` under $GPU_BENCH_WORK/verl (copied to $OUT when set).
# Output: the table on stdout; every stage's log and stats.jsonl under $GPU_BENCH_WORK (default
# /tmp/leantrain-gpu-bench), copied to $OUT when that is set (the device tool's result folder).
set -euo pipefail

MODE=gpu
case "${1:-}" in
    --cpu-smoke) MODE=cpu ;;
    --prepare) MODE=prepare ;;
    --verl) MODE=verl ;;
    "") ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "usage: $0 [--cpu-smoke | --prepare | --verl]" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
HERE="$ROOT/tools/bench"
WHEELS="$ROOT/.gpu-bench/wheels"

if [[ $MODE == prepare ]]; then
    # leantrain's pure-Python packages as wheels, plus the locked versions of what the device
    # image (KINDS.md: python3 with torch, transformers, peft, accelerate, lightning, pyarrow,
    # pandas …) does not have
    mkdir -p "$WHEELS" "$ROOT/.gpu-bench/data"
    grep -qx '/.gpu-bench/' .git/info/exclude 2>/dev/null || echo '/.gpu-bench/' >>.git/info/exclude
    for pkg in leantrain-core leantrain-export leantrain-tactics leantrain-llm leantrain-retrieval; do
        uv build --quiet --package "$pkg" --wheel -o "$WHEELS"
    done
    missing=(trl datasets dill multiprocess pydantic pydantic-core annotated-types
        typing-inspection msgspec orjson bm25s)
    pins=()
    for name in "${missing[@]}"; do
        v=$(uv export --locked --no-hashes --all-packages 2>/dev/null | grep -i "^${name}==" |
            head -1 | sed 's/ .*//; s/;.*//') || true
        pins+=("${v:-$name}")
    done
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$WHEELS" "${pins[@]}"
    cp -r "${LEANTRAIN_DATA:-../shared/data}/leandojo-benchmark-4-head" "$ROOT/.gpu-bench/data/"
    du -sh "$ROOT/.gpu-bench"
    echo "ready: carry [\".gpu-bench\"] and run: bash tools/bench/gpu.sh"
    exit 0
fi

if [[ $MODE == verl ]]; then
    VPY=${LEANTRAIN_VERL_PYTHON:-$ROOT/.venv-verl/bin/python}
    "$VPY" -c 'import leantrain.verl, verl' ||
        { echo "gpu.sh --verl: no leantrain-verl at $VPY (UV_PROJECT_ENVIRONMENT=.venv-verl uv sync --package leantrain-verl)" >&2; exit 2; }
    W=${GPU_BENCH_WORK:-/tmp/leantrain-gpu-bench}/verl
    rm -rf "$W" && mkdir -p "$W"
    SAMPLE=$("$VPY" -c 'from leantrain.core.sample import sample_repo_dirs; print(sample_repo_dirs()[0])')
    GPUS=$("$VPY" -c 'import torch; print(torch.cuda.device_count())')
    "$VPY" "$HERE/gpu_bench.py" build-lm "$W/lm" --preset "$([[ $GPUS -gt 0 ]] && echo qwen0.5b || echo smoke)"
    cat >"$W/verl.yaml" <<YAML
leantrain:
  model_name: $W/lm
  rewards: [format, no_sorry]
  max_eval_samples: 16
verifier:
  type: repl
  command: $VPY $ROOT/packages/leantrain-lean/tests/fake_repl.py --use readme
  timeout: 30
data: {train_batch_size: 8, max_prompt_length: 512, max_response_length: 32}
actor_rollout_ref:
  model: {lora_rank: 16, lora_alpha: 32, target_modules: all-linear}
  actor: {optim: {lr: 1.0e-5}, ppo_mini_batch_size: 8, ppo_micro_batch_size_per_gpu: 8}
  rollout: {name: vllm, n: 4, tensor_model_parallel_size: 1, gpu_memory_utilization: 0.4,
            log_prob_micro_batch_size_per_gpu: 8}
  ref: {log_prob_micro_batch_size_per_gpu: 8}
trainer: {n_gpus_per_node: 1, nnodes: 1, total_training_steps: 3, save_freq: 3, test_freq: -1}
YAML
    TRAIN=("$VPY" -c 'import sys; from leantrain.core.cli import main; sys.exit(main())' verl train
        --config "$W/verl.yaml" --algorithm grpo --data_path "$SAMPLE" --output_dir "$W/run")
    "${TRAIN[@]}" --dry-run >"$W/dry-run.yaml" || { echo "gpu.sh --verl: the dry run failed" >&2; exit 1; }
    if [[ $GPUS -eq 0 ]]; then
        echo "gpu.sh --verl: no GPU visible: the config composed and checked ($W/dry-run.yaml); stopping" >&2
        exit 0
    fi
    "$VPY" -c 'import vllm' || { echo "gpu.sh --verl: vLLM is not installed in $VPY" >&2; exit 2; }
    start=$SECONDS
    rc=0
    timeout --kill-after=10 "${GPU_BENCH_BUDGET_S:-570}" "${TRAIN[@]}" >"$W/train.json" 2>"$W/train.err" || rc=$?
    echo "[gpu.sh] verl grpo+lora: exit $rc in $((SECONDS - start))s; VERL's last metrics:" >&2
    grep -E "step:[0-9]+ - " "$W/train.err" | tail -n 3 >&2 || true
    [[ -n ${OUT:-} && -d ${OUT:-} ]] && cp "$W/train.json" "$W/train.err" "$W/verl.yaml" "$OUT/"
    exit "$rc"
fi

# -- the Python that runs leantrain --------------------------------------------------------
PY=()
probe='import leantrain.llm, leantrain.retrieval, leantrain.export, trl, datasets'
if [[ -n ${LEANTRAIN_PYTHON:-} ]]; then
    PY=("$LEANTRAIN_PYTHON")
elif command -v uv >/dev/null && uv run --locked --offline python -c "$probe" 2>/dev/null; then
    PY=(uv run --locked --offline python)
elif compgen -G "$WHEELS/*.whl" >/dev/null; then
    SITE=/tmp/leantrain-gpu-site
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" "$WHEELS"/*.whl
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    PY=(python3)
else
    echo "gpu.sh: no Python with leantrain: set LEANTRAIN_PYTHON, sync the venv (uv sync --locked)," >&2
    echo "        or run 'bash tools/bench/gpu.sh --prepare' here and carry .gpu-bench" >&2
    exit 2
fi
"${PY[@]}" -c "$probe" || { echo "gpu.sh: leantrain does not import with ${PY[*]}" >&2; exit 2; }

DATA=""
for d in "${LEANTRAIN_DATA:-}" ../shared/data shared/data .gpu-bench/data; do
    if [[ -n $d && -f $d/leandojo-benchmark-4-head/test_head.json ]]; then DATA=$d; break; fi
done
[[ -n $DATA ]] || { echo "gpu.sh: no leandojo-benchmark-4-head/test_head.json (see Prerequisites)" >&2; exit 2; }

# -- sizes ---------------------------------------------------------------------------------
if [[ $MODE == gpu ]]; then
    "${PY[@]}" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
        { echo "gpu.sh: no CUDA GPU visible (for a CPU check: --cpu-smoke)" >&2; exit 2; }
    LM=qwen0.5b; BYT5=byt5-small; BUDGET=${GPU_BENCH_BUDGET_S:-570}
    SFT_STEPS=60; LORA_STEPS=60; GRPO_STEPS=8; RETR_STEPS=150
    BATCH=16; GRPO_BATCH=16; EVAL_N=64; MAXLEN=2048; CTX=512
    CAP_SFT=150; CAP_LORA=100; CAP_GRPO=120; CAP_RETR=120; CAP_EVAL=45; CAP_PREP=90
else
    LM=smoke; BYT5=smoke; BUDGET=${GPU_BENCH_BUDGET_S:-2400}
    SFT_STEPS=3; LORA_STEPS=3; GRPO_STEPS=2; RETR_STEPS=3
    BATCH=2; GRPO_BATCH=4; EVAL_N=4; MAXLEN=1024; CTX=128
    # generous caps: on a shared CPU a Python start alone can take a minute
    CAP_SFT=300; CAP_LORA=300; CAP_GRPO=300; CAP_RETR=300; CAP_EVAL=200; CAP_PREP=300
    export CUDA_VISIBLE_DEVICES=""
fi

W=${GPU_BENCH_WORK:-/tmp/leantrain-gpu-bench}
rm -rf "$W"
mkdir -p "$W/logs"
STATS="$W/stats.jsonl"
START=$SECONDS
export TQDM_DISABLE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1

# stage NAME CAP CMD... — run CMD under `timeout` for min(CAP, time left); log to $W/logs/NAME
stage() {
    local name=$1 cap=$2
    shift 2
    local left=$((BUDGET - (SECONDS - START)))
    local t=$((cap < left ? cap : left))
    if ((t < 20)); then
        echo "[gpu.sh] $name: skipped (time box: ${left}s left)" >&2
        printf '{"label": "%s", "exit": "skipped", "wall_s": 0, "steps": 0}\n' "$name" >>"$STATS"
        return 0
    fi
    echo "[gpu.sh] $name (≤ ${t}s, $((SECONDS - START))s elapsed)" >&2
    local rc=0
    timeout --kill-after=10 "$t" "$@" >"$W/logs/$name.out" 2>"$W/logs/$name.err" || rc=$?
    if ((rc != 0)); then
        echo "[gpu.sh] $name: exit $rc; last lines of its log:" >&2
        tail -n 5 "$W/logs/$name.err" >&2
        grep -q "\"label\": \"$name\"" "$STATS" 2>/dev/null ||
            printf '{"label": "%s", "exit": %d, "wall_s": %d, "steps": 0}\n' "$name" "$rc" "$t" >>"$STATS"
    fi
    return 0
}
bench() { # bench LABEL [--model-dir D] [--lora] -- leantrain argv...
    local label=$1
    shift
    stage "$label" "$CAP" "${PY[@]}" "$HERE/gpu_bench.py" run --label "$label" --stats "$STATS" "$@"
}
LT='import sys; from leantrain.core.cli import main; sys.exit(main())'  # `leantrain ARGS...`

stage import "$CAP_PREP" "${PY[@]}" -c "$LT" export import "$DATA/leandojo-benchmark-4-head/test_head.json" \
    --db "$W/lb4.db"
stage merge "$CAP_PREP" "${PY[@]}" -c "$LT" export merge --db "$W/lb4.db" --out "$W/lb4"
[[ -f $W/lb4/random/train.json ]] || { echo "gpu.sh: the LB4 export failed (logs in $W/logs)" >&2; exit 1; }
stage build-lm "$CAP_PREP" "${PY[@]}" "$HERE/gpu_bench.py" build-lm "$W/lm" --preset "$LM"
stage build-byt5 "$CAP_PREP" "${PY[@]}" "$HERE/gpu_bench.py" build-byt5 "$W/byt5" --preset "$BYT5"
cat "$W/logs/build-lm.out" "$W/logs/build-byt5.out" >&2

EVAL=(--data "$W/lb4" --split test --max_eval_samples "$EVAL_N" --eval_k 4)
COMMON=(--data "$W/lb4" --max_eval_samples 8 --logging_steps 1 --save_strategy no --report_to none
    --max_length "$MAXLEN" --seed 0)

CAP=$CAP_EVAL bench eval-base -- llm eval --model "$W/lm" "${EVAL[@]}"
CAP=$CAP_SFT bench sft-full --model-dir "$W/lm" -- sft --model "$W/lm" --output-dir "$W/sft-full" \
    --max-steps "$SFT_STEPS" --per_device_train_batch_size "$BATCH" --learning_rate 1e-4 \
    --warmup_steps 5 "${COMMON[@]}"
CAP=$CAP_EVAL bench eval-sft-full -- llm eval --model "$W/sft-full" "${EVAL[@]}"
CAP=$CAP_LORA bench sft-lora --model-dir "$W/lm" --lora -- sft --model "$W/lm" \
    --output-dir "$W/sft-lora" --use_lora true --lora_r 16 --lora_alpha 32 \
    --max-steps "$LORA_STEPS" --per_device_train_batch_size "$BATCH" --learning_rate 1e-3 \
    --warmup_steps 5 "${COMMON[@]}"
CAP=$CAP_EVAL bench eval-sft-lora -- llm eval --model "$W/sft-lora" "${EVAL[@]}"
CAP=$CAP_GRPO bench grpo --model-dir "$W/lm" -- grpo --model "$W/sft-full" --output-dir "$W/grpo" \
    --max-steps "$GRPO_STEPS" --per_device_train_batch_size "$GRPO_BATCH" --num_generations 4 \
    --max_completion_length 32 --learning_rate 1e-6 --reward_funcs format --reward_funcs no_sorry \
    --data "$W/lb4" --max_eval_samples 8 --save_strategy no --report_to none --seed 0
CAP=$CAP_EVAL bench eval-grpo -- llm eval --model "$W/grpo" "${EVAL[@]}"
PREC=(--precision bf16-mixed --accelerator gpu --devices 1)
[[ $MODE == cpu ]] && PREC=(--accelerator cpu --devices 1)
CAP=$CAP_RETR bench retrieval --model-dir "$W/byt5" -- retrieval train --model_name "$W/byt5" \
    --data_path "$W/lb4" --output_dir "$W/retrieval" --max-steps "$RETR_STEPS" --batch_size 8 \
    --context_max_len "$CTX" --premise_max_len "$CTX" --warmup_steps 10 --report_to none \
    --seed 0 "${PREC[@]}"

if [[ $MODE == gpu ]]; then
    PROVE=(prove --generator "$W/sft-full" --data "$W/lb4" --split test --backend replay
        --decoding beam --k 8 --max-theorems 20 --max-expansions 20 --progress-bar false)
    stage prove-hf 90 "${PY[@]}" -c "$LT" "${PROVE[@]}" --engine hf --output-dir "$W/prove-hf"
    stage prove-vllm 150 "${PY[@]}" -c "$LT" "${PROVE[@]}" --engine vllm --output-dir "$W/prove-vllm"
    tail -n 3 "$W/logs/prove-hf.out" "$W/logs/prove-vllm.out" >&2 || true
fi

echo "[gpu.sh] done in $((SECONDS - START))s (budget ${BUDGET}s); logs and stats.jsonl in $W" >&2
"${PY[@]}" "$HERE/gpu_bench.py" report "$STATS"
if [[ -n ${OUT:-} && -d ${OUT:-} ]]; then
    cp "$STATS" "$OUT/" && tar -czf "$OUT/gpu-bench-logs.tar.gz" -C "$W" logs
fi
