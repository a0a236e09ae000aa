#!/usr/bin/env bash
# Runs the app controls' model (test/integration/app-model.test.ts) for many sequences, split over
# parallel processes that each get their own fast-check seed, so a long run fits a session:
#   scripts/model-run.sh [sequences, default 10000] [processes, default 4] [first seed, default 1001]
# Each process logs to model-<seed>.log in the current folder; the exit code is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
total=${1:-10000}
parts=${2:-4}
first=${3:-1001}
each=$(( (total + parts - 1) / parts ))
pids=()
for i in $(seq 0 $((parts - 1))); do
  seed=$((first + i))
  MODEL_RUNS=$each MODEL_SEED=$seed npx vitest run test/integration/app-model.test.ts >"model-$seed.log" 2>&1 &
  pids+=("$!")
  echo "seed $seed: $each sequences (log: model-$seed.log)"
done
status=0
for i in "${!pids[@]}"; do
  seed=$((first + i))
  if wait "${pids[$i]}"; then echo "seed $seed: passed"; else echo "seed $seed: FAILED (see model-$seed.log)"; status=1; fi
done
exit $status
