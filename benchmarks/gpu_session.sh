#!/usr/bin/env bash
# One call on a lent GPU machine (the workplace's `device` tool; see benchmarks/README.md, "GPU"):
# its python3 has PyTorch with CUDA but no package registry, so the packages robustbnn needs
# that the image lacks travel as wheels in .whl/ (git-ignored), downloaded beforehand with
#   pip download --no-deps --only-binary=:all: --python-version 3.12 ... -d .whl \
#     mlxtend platformdirs torchattacks laplace-torch asdfghjkl backpack-for-pytorch \
#     curvlinops-for-pytorch einconv unfoldNd
# Three steps, each under its own time limit, logs and results under $OUT:
#   1. the attack-step and predictive benchmarks on CUDA (ratios against baselines of the same run);
#   2. the model tests on CUDA (`pytest --device cuda`, not the slow ones);
#   3. the default suite (`robustbnn bench`) on CUDA, timed per task, for the rest of the budget.
set -uo pipefail
: "${OUT:=/tmp/gpu_out}"
BUDGET=${1:-520}          # seconds for the whole script
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
# robustbnn from the working tree, as an editable install maps it: the dataset recipes in
# datasets/ are the package robustbnn.recipes (a link, made in this scratch copy only)
[ -e robustbnn/recipes ] || ln -s ../datasets robustbnn/recipes
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 ROBUSTBNN_CACHE=/tmp/rbcache
nvidia-smi -L
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(), 'cpus', torch.get_num_threads())"

echo "== 1. benchmarks on cuda ($(left) s left)"
timeout 170 python3 -m pytest benchmarks/bench_attack_step.py benchmarks/bench_predictive.py \
    -p no:cacheprovider -q --benchmark-json "$OUT/bench_cuda.json" >"$OUT/bench.log" 2>&1
echo "rc $?"; tail -45 "$OUT/bench.log"

echo "== 2. model tests on cuda ($(left) s left)"
timeout 110 python3 -m pytest --device cuda -m "not slow" -q -p no:cacheprovider \
    tests/models tests/test_testing_kit.py tests/run/test_generators.py >"$OUT/tests.log" 2>&1
echo "rc $?"; tail -12 "$OUT/tests.log"

echo "== 3. default suite on cuda ($(left) s left)"
t3=$(date +%s)
timeout $(( $(left) - 15 )) python3 -m robustbnn bench --device cuda --out /tmp/default_cuda \
    >"$OUT/default.log" 2>&1
echo "rc $? after $(( $(date +%s) - t3 )) s"; tail -5 "$OUT/default.log"
python3 - <<'EOF' | tee "$OUT/default_tasks.txt"
import collections, json, pathlib
seconds, count = collections.Counter(), collections.Counter()
for f in pathlib.Path("/tmp/default_cuda").rglob("*.json"):
    try:
        d = json.loads(f.read_text())
    except Exception:
        continue
    if isinstance(d, dict) and "seconds" in d and isinstance(d.get("cell"), dict):
        task = d["cell"].get("task", "?")
        seconds[task] += d["seconds"]; count[task] += 1
for task, s in seconds.most_common():
    print(f"{task:16s} {count[task]:4d} cells {s:8.1f} s")
print(f"{'total':16s} {sum(count.values()):4d} cells {sum(seconds.values()):8.1f} s")
EOF
cp /tmp/default_cuda/leaderboard.md "$OUT/" 2>/dev/null
tar czf "$OUT/default_cuda.tgz" -C /tmp default_cuda --exclude='*.safetensors' 2>/dev/null
ls -la "$OUT"
