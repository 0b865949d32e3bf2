#!/usr/bin/env bash
# `make sanitize`: every stage, and every exercise's worked solution, under compute-sanitizer's
# memcheck (out-of-bounds and misaligned accesses), racecheck (shared-memory races) and synccheck
# (barriers some threads miss). Needs a GPU; stage 06 alone takes some 15 minutes on an H200. The
# shapes are small, because the tools slow kernels down by 10 to 1000 times, and chosen so that
# every kernel of a stage runs (what a shape adds is named beside it). Each run verifies its answers as usual and
# runs once timed. Three rare paths of stage 06 need rows that only its tests build (a fast_split row
# whose candidates overflow their list, a fast_row row that fools the guess, fast_chunks launched
# again on the workspace its last launch left), so those tests run under the tools as well:
# racecheck found a race there that no run of the program reaches. So does the decode loop's test
# (a CUDA graph of a few batches of one, with and without programmatic dependent launch): the
# program's loop is 512 tokens long. So does the test of FlashInfer's sampler, which only the default
# run draws with (its racecheck takes some 2 minutes). Any error stops the script.
#
# synccheck misreads a grid of 16-block clusters that runs in several waves: it reports "Divergent
# thread(s) in warp" at barriers every warp reaches whole, in fast_split and in a convergent kernel
# of a dozen lines (tests/synccheck_cluster_waves.cu: errors at 4.6 and 17.7 waves, none at 0.1 or
# 1.1, nor with clusters of 2 or without clusters; 06_fused_topk/journal/). A run that names a kernel
# after a second `|` leaves it out of synccheck alone; such a kernel also runs under synccheck at a
# shape of one wave.
set -uo pipefail
cd "$(dirname "$0")/.."

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "sanitize: compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 1; }

# program | flags (a stage's run; run_solution runs its exercise's worked solution) [| the kernel
# synccheck leaves out]
runs=(
    "01_naive/run                 | --sizes 1000,1M"
    "02_multipass/run             | --sizes 1000,1M"
    "03_fused3kernel/run          | --sizes 1000,1M,10M"
    "04_warp/run                  | --sizes 1M"
    "04_warp/run                  | --rows 1000 --cols 100"     # every mapping (a warp a row needs cols <= 1024)
    "04_warp/run                  | --rows 64 --cols 4096"      # a block a row, longer than the block
    "05_online/run                | --sizes 1M"
    "05_online/run                | --rows 1000 --cols 100"     # a warp a row, 16-byte loads
    "05_online/run                | --rows 300 --cols 129"      # a warp a row, rows not 16-byte aligned
    "05_online/run                | --rows 64 --cols 4096"      # a block a row, the row cached in shared memory
    "05_online/run                | --rows 8 --cols 50257"      # two blocks a row, a cluster (sm_90)
    "05_online/run                | --rows 2 --cols 100000"     # a block a row, too long to cache
    "06_fused_topk/run            | --rows 264 --cols 1000 --k 10 | fast_split_kernel"  # every variant, fused too (K <= 32)
    "06_fused_topk/run            | --rows 8 --cols 1000 --k 10 --variant fast_split"      # fast_split's short rows, one wave
    "06_fused_topk/run            | --rows 8 --cols 50257 --k 50"             # a guessed first threshold, K > 32
    "06_fused_topk/run            | --rows 8 --cols 50257 --k 1024"           # K > 64: merges in shared memory, radix select
    "06_fused_topk/run            | --rows 8 --cols 50257 --k 50 --dtype bf16"
    "06_fused_topk/run            | --rows 8 --cols 50257 --k 10 --dtype fp16"
    "06_fused_topk/run            | --rows 1 --cols 262144 --k 50"            # fast_split's largest tiles
    "06_fused_topk/run            | --rows 1 --cols 262144 --k 50 --order ascending --variant fast_split"  # its list made again
    "06_fused_topk/run            | --rows 2 --cols 600000 --k 50 --order ascending --variant fast_split"  # the same, several tiles a block
    "06_fused_topk/run            | --rows 3 --cols 5001 --k 50 --variant fast_chunks"  # rows in chunks, the last ragged
    "06_fused_topk/run            | --rows 2 --cols 40000 --k 300 --dtype fp16 --variant fast_chunks" # lists merged in shared memory
    "06_fused_topk/run            | --rows 256 --cols 5000 --k 50 --sample --temperature 0.8 --top-p 0.9 --variant fast_row"   # the draw in fast_row
    "06_fused_topk/run            | --rows 256 --cols 5000 --k 1024 --sample --min-p 0.01 --variant fast_row"  # the draw's 32 tiles
    "06_fused_topk/run            | --rows 1 --cols 50257 --k 50 --sample --temperature 0.8 --top-p 0.9 --variant fast_split" # the draw after the count
    "06_fused_topk/run            | --rows 1 --cols 50257 --k 1024 --sample --variant fast_split"  # the draw after the sort
    "01_naive/run_solution        | --variant exercise --n 1000 --range 500:1000"
    "02_multipass/run_solution    | --variant exercise --sizes 1,2049,1M,4194305"   # 1, 2, 2 and 3 levels
    "03_fused3kernel/run_solution | --variant exercise --sizes 1000,65537,1M,10M" # 1 to 153 merge blocks
    "04_warp/run_solution         | --variant exercise --rows 1001 --cols 13"
    "04_warp/run_solution         | --variant exercise --rows 17 --cols 16"
    "05_online/run_solution       | --variant exercise --sizes 1,3,5,1025,1M,4325381" # the unrolled loop's edge + 5
    "06_fused_topk/run_solution   | --variant exercise --rows 5 --cols 257 --k 1"
    "06_fused_topk/run_solution   | --variant exercise --rows 7 --cols 50257 --k 1 --dtype bf16"
)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# sanitize LABEL EXCLUDED COMMAND...: the command under each tool (synccheck without the kernel
# EXCLUDED names, if any); on an error, its log's end, and stop.
sanitize() {
    local label=$1 excluded=$2 tool
    shift 2
    for tool in memcheck racecheck synccheck; do
        local filter=()
        [ "$tool" = synccheck ] && [ -n "$excluded" ] && filter=(--kernel-name-exclude "kns=$excluded")
        printf '%-9s %s ... ' "$tool" "$label${filter:+ (without $excluded)}"
        if "$sanitizer" --tool "$tool" "${filter[@]}" --target-processes all --error-exitcode 1 "$@" >"$log" 2>&1; then
            echo "0 errors"
        else
            echo "FAILED"
            tail -n 30 "$log"
            exit 1
        fi
    done
}

# STAGE=N (make sanitize STAGE=N): stage N's runs alone.
only=${STAGE:+0$STAGE}
for run in "${runs[@]}"; do
    IFS='|' read -r program args excluded <<<"$run"
    program=$(echo "$program" | tr -d ' ')
    excluded=$(echo "$excluded" | tr -d ' ')
    [ -z "$only" ] || [ "${program%%_*}" = "$only" ] || continue
    read -r -a flags <<<"$args"
    sanitize "$(printf '%-28s %s' "$program" "${flags[*]}")" "$excluded" "$program" "${flags[@]}" --iters 1 --warmup 0
done
if [ -z "$only" ] || [ "$only" = 06 ]; then
    for test in stage06/rows_full_of_ties stage06_fast/rows_that_fool_the_guess stage06_fast/chunks_back_to_back \
        stage06_decode/graph_gives_the_reference_answers stage06_draw/flashinfer_sampler_follows_the_rule; do
        sanitize "$(printf '%-28s %s' tests "$test")" "" tests/build/run_tests --filter "$test"
    done
fi
echo "sanitize: ${only:+stage $only: }every run clean under memcheck, racecheck and synccheck"
