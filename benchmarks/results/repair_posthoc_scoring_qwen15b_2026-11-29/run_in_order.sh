#!/bin/bash
# Runs the one-line tasks one at a time in the fixed order; no new task starts after $CUTOFF (UTC epoch).
# Usage: drive.sh ORDER_FILE OUTDIR CUTOFF_HHMM [extra run flags...]
set -u
ORDER=$1; OUTDIR=$2; CUT=$3; shift 3
cd /work/wt/s41-run
. /work/venv/bin/activate
export PYTHONPATH=$PWD LITELLM_LOCAL_MODEL_COST_MAP=True
mkdir -p "$OUTDIR"
cutoff=$(date -u -d "today $CUT" +%s); [ "$cutoff" -lt "$(date -u +%s)" ] && cutoff=$((cutoff+86400))
n=0
for id in $(grep -v '^#' "$ORDER" | grep -v '^$'); do
  [ -f "$OUTDIR/$id.json" ] && { n=$((n+1)); continue; }
  now=$(date -u +%s)
  if [ "$now" -ge "$cutoff" ]; then echo "STOP at $(date -u +%H:%M:%S): cutoff $CUT reached after $n tasks"; break; fi
  echo "=== $id start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  python -m benchmarks.repair run --api-base http://127.0.0.1:8766/v1 --model openai/qwen2.5-coder-1.5b-instruct \
    --agents lsp-agent --lsp-profile small --tasks "$id" --out "$OUTDIR/$id.json" "$@" 2>&1 | grep -v '^$' | tail -4
  echo "=== $id end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  n=$((n+1))
  if python -c "import json,sys; sys.exit(0 if json.load(open('$OUTDIR/$id.json'))['results'][0]['repaired'] else 1)"; then
    (python -m benchmarks.repair classify "$OUTDIR/$id.json" > "$OUTDIR/$id.classify.log" 2>&1; echo "=== $id classified $(date -u +%H:%M:%S)" >> "$OUTDIR/$id.classify.log") &
  fi
done
echo "DONE $(date -u +%H:%M:%S) $n tasks"
