#!/bin/bash
# Runs the repair benchmark's tasks one at a time in a fixed order (one id a line, # comments), each with
# `python -m benchmarks.repair run`, classifying the repaired ones; no new task starts after CUTOFF (HH:MM UTC,
# the next day's if already past). Task results already in OUTDIR are kept (a run can be resumed).
# Usage: benchmarks/repair/run_in_order.sh ORDER_FILE OUTDIR CUTOFF_HHMM [extra run flags...]
# Environment: API_BASE (default http://127.0.0.1:8766/v1), MODEL (default openai/qwen2.5-coder-1.5b-instruct);
# run from the checkout to measure, in the venv that has lsp-agent's bench extra.
set -u
ORDER=$1; OUTDIR=$2; CUT=$3; shift 3
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD LITELLM_LOCAL_MODEL_COST_MAP=True
API_BASE=${API_BASE:-http://127.0.0.1:8766/v1}; MODEL=${MODEL:-openai/qwen2.5-coder-1.5b-instruct}
mkdir -p "$OUTDIR"
cutoff=$(date -u -d "today $CUT" +%s); [ "$cutoff" -lt "$(date -u +%s)" ] && cutoff=$((cutoff+86400))
n=0
for id in $(grep -v '^#' "$ORDER" | grep -v '^$'); do
  [ -f "$OUTDIR/$id.json" ] && { n=$((n+1)); continue; }
  now=$(date -u +%s)
  if [ "$now" -ge "$cutoff" ]; then echo "STOP at $(date -u +%H:%M:%S): cutoff $CUT reached after $n tasks"; break; fi
  echo "=== $id start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  python -m benchmarks.repair run --api-base "$API_BASE" --model "$MODEL" \
    --agents lsp-agent --lsp-profile small --tasks "$id" --out "$OUTDIR/$id.json" "$@" 2>&1 | grep -v '^$' | tail -4
  echo "=== $id end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  n=$((n+1))
  if python -c "import json,sys; sys.exit(0 if json.load(open('$OUTDIR/$id.json'))['results'][0]['repaired'] else 1)"; then
    (python -m benchmarks.repair classify "$OUTDIR/$id.json" > "$OUTDIR/$id.classify.log" 2>&1; echo "=== $id classified $(date -u +%H:%M:%S)" >> "$OUTDIR/$id.classify.log") &
  fi
done
echo "DONE $(date -u +%H:%M:%S) $n tasks"
