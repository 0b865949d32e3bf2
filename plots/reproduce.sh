#!/usr/bin/env bash
# make reproduce: every stage's default experiment on this machine's GPU, then make plots. Each stage
# runs `./run --csv ../plots/data/<gpu>/NN_<stage>.csv` in its folder, <gpu> the folder named from
# the GPU (gpu_folder below); stage 02 then times its exercise's worked solution, `./run_solution
# --variant exercise`, into 02_multipass_solution.csv; stage 06 adds PyTorch's rows
# (06_fused_topk/torch_topk.py) when python3 can import torch with CUDA, then runs its named
# experiment, `./run --experiment serving`, into 06_fused_topk_serving.csv. No other GPU's folder is
# touched. A stage whose rows fail verification keeps its CSV, FAIL rows included (the program
# writes it and exits 1); the script says so, runs the other stages and make plots, and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."

# The folder of plots/data that a GPU's runs go to, from its name as nvidia-smi prints it: the name
# lowercased, without "NVIDIA ", any run of characters other than letters and digits made one "-"
# ("NVIDIA A100-SXM4-80GB" -> a100-sxm4-80gb, "NVIDIA GeForce RTX 4090" -> geforce-rtx-4090); the
# H100's three forms by their form factor, which their names do not all say.
gpu_folder() {
    local name=${1#NVIDIA }
    case $name in
        "H100 80GB HBM3") echo h100-sxm ;;
        "H100 PCIe") echo h100-pcie ;;
        "H100 NVL") echo h100-nvl ;;
        *) echo "$name" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//' ;;
    esac
}

# The GPU the stage programs run on: CUDA's device 0, the first of CUDA_VISIBLE_DEVICES when that is
# set (an index or a UUID, as nvidia-smi -i takes them).
visible=${CUDA_VISIBLE_DEVICES:-0}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${visible%%,*}" 2>/dev/null | head -n 1)
if [ -z "$gpu" ]; then
    echo "make reproduce: no NVIDIA GPU here (nvidia-smi found none); the experiments need one" >&2
    exit 1
fi
out=plots/data/$(gpu_folder "$gpu")

# The stages, and how long each one's default experiment took on an H100 SXM, in seconds (stage 06
# with the libraries' rows: on an H200, whose stage 06 took 72 s without them; PyTorch's rows for
# stage 06 took about 250 s more).
stages=(01_naive 02_multipass 03_fused3kernel 04_warp 05_online 06_fused_topk)
seconds=(5 7 10 27 61 140)
serving_seconds=240
total=$serving_seconds
for s in "${seconds[@]}"; do total=$((total + s)); done
if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    torch=1; torch_note="plus PyTorch's rows for stage 06"
else
    torch=0; torch_note="PyTorch's rows for stage 06 skipped: python3 cannot import torch with CUDA"
fi
echo "make reproduce: $gpu, CSVs to $out/ (the other GPUs' folders are left as they are)"
echo "six stages and stage 06's serving experiment, about $((total / 60)) min $((total % 60)) s on an H100 SXM or H200 once built; $torch_note"

log=$(mktemp)
stamp=$(mktemp)
trap 'rm -f "$log" "$stamp"' EXIT
echo "building the stages ..."
if ! make all >"$log" 2>&1; then
    tail -n 20 "$log"
    echo "make reproduce: the build failed (above); nothing was run" >&2
    exit 1
fi
mkdir -p "$out"

# Each program's output goes to $log, shown only where it stopped; each run gets one line.
failed=0
# run_to_csv DIR CSV PROGRAM [ARGS...]: DIR/PROGRAM ARGS --csv CSV, and the line saying how it ended;
# fresh=1 where it wrote CSV (a failed run's CSV keeps its FAIL rows). The program renames its CSV
# over the old one only once it has written all of it: a CSV newer than the stamp is this run's.
run_to_csv() {
    local dir=$1 csv=$2 status start
    shift 2
    touch "$stamp"
    start=$SECONDS
    (cd "$dir" && "$@" --csv "../$csv") >"$log" 2>&1
    status=$?
    fresh=0
    [ "$csv" -nt "$stamp" ] && fresh=1
    if [ $status -eq 0 ]; then
        echo "$((SECONDS - start)) s, PASS"
    elif [ $fresh -eq 1 ]; then
        echo "$((SECONDS - start)) s, FAIL: its CSV keeps the failed rows"
        failed=1
    else
        echo "$((SECONDS - start)) s, stopped (exit code $status) before writing its CSV; the last of its output:"
        tail -n 5 "$log" | sed 's/^/    /'
        failed=1
    fi
}
for i in "${!stages[@]}"; do
    stage=${stages[$i]}
    csv=$out/$stage.csv
    printf "stage %d/%d: %s (about %d s) ... " $((i + 1)) ${#stages[@]} "$stage" "${seconds[$i]}"
    run_to_csv "$stage" "$csv" ./run
    stage_fresh=$fresh
    if [ "$stage" = 02_multipass ]; then
        printf "stage %d/%d: the exercise's solution, ./run_solution --variant exercise ... " $((i + 1)) ${#stages[@]}
        run_to_csv "$stage" "$out/02_multipass_solution.csv" ./run_solution --variant exercise
    fi
    if [ "$stage" = 06_fused_topk ] && [ $torch -eq 1 ] && [ $stage_fresh -eq 1 ]; then
        printf "stage %d/%d: PyTorch's rows, 06_fused_topk/torch_topk.py ... " $((i + 1)) ${#stages[@]}
        start=$SECONDS
        if python3 06_fused_topk/torch_topk.py --csv "$csv" >"$log" 2>&1; then
            echo "$((SECONDS - start)) s, appended to its CSV"
        else
            echo "$((SECONDS - start)) s, failed; the last of its output:"
            tail -n 5 "$log" | sed 's/^/    /'
            failed=1
        fi
    fi
    if [ "$stage" = 06_fused_topk ]; then
        printf "stage %d/%d: a server's shapes, ./run --experiment serving (about %d s) ... " $((i + 1)) ${#stages[@]} \
            "$serving_seconds"
        run_to_csv "$stage" "$out/06_fused_topk_serving.csv" ./run --experiment serving
    fi
done

rmdir --ignore-fail-on-non-empty "$out"  # where no stage wrote a CSV
if [ $failed -ne 0 ]; then
    echo "make reproduce: not every stage passed (above); $out/ keeps the CSVs they wrote" >&2
fi
if ! make plots; then
    echo "make reproduce: make plots failed (above); the CSVs are in $out/, run make plots once it can" >&2
    exit 1
fi
[ $failed -eq 0 ] || exit 1
echo "make reproduce: every stage passed; $out/, the charts and the pages are regenerated"
