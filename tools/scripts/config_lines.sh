#!/usr/bin/env bash
# Lines (wc -l) of the configuration layer, the set issue 24 and issue 32 measure: core's
# config machinery and run state, every package's cli.py, retrieval's trainer_args.py, verl's
# config.py and the config dataclasses. Files that do not exist (moved or deleted) are skipped.
# Usage: bash tools/scripts/config_lines.sh [--all]   (--all: each file's count first)
set -euo pipefail
cd "$(dirname "$0")/../.."
P=packages
files=(
  $P/leantrain-core/src/leantrain/core/{config,parser,yaml_loader,groups,legacy_config,manifest,command,cli}.py
  $P/*/src/leantrain/*/cli.py
  $P/leantrain-retrieval/src/leantrain/retrieval/trainer_args.py
  $P/leantrain-verl/src/leantrain/verl/{config,verl_config}.py
  $P/leantrain-llm/src/leantrain/llm/{common_config,sft_config,grpo_config,eval_config}.py
  $P/leantrain-progress/src/leantrain/progress/{progress_config,progress_arguments}.py
  $P/leantrain-retrieval/src/leantrain/retrieval/retrieval_config.py
  $P/leantrain/src/leantrain/pipeline/pipeline_config.py
)
# beyond the measured set: config classes that hold settings moved out of it (tactics' prompt
# groups, the prover's, export's and the Lean contract's), printed as a second total
extra=(
  $P/leantrain-tactics/src/leantrain/tactics/dataset_config.py
  $P/leantrain-prover/src/leantrain/prover/prover_config.py
  $P/leantrain-export/src/leantrain/export/export_config.py
  $P/leantrain-lean/src/leantrain/lean/args.py
)
present=() more=()
for f in "${files[@]}"; do [[ -f $f && " ${present[*]} " != *" $f "* ]] && present+=("$f"); done
for f in "${extra[@]}"; do [[ -f $f ]] && more+=("$f"); done
if [[ ${1:-} == --all ]]; then wc -l "${present[@]}"; wc -l "${more[@]}"; fi
echo "measured set: $(cat "${present[@]}" | wc -l) lines in ${#present[@]} files"
moved=($P/*/src/leantrain/*/runner.py $P/*/src/leantrain/*/commands.py)
echo "run functions (and export's / the pipeline's groups) moved out of cli.py, not in the set:" \
  "$(cat "${moved[@]}" 2>/dev/null | wc -l) lines in runner.py / commands.py (llm's runner.py had 78 before)"
echo "with the extra config classes: $(cat "${present[@]}" "${more[@]}" | wc -l) lines"
