#!/bin/sh
# make plots: regenerates every chart (plots/*.png and *.svg, by the gnuplot scripts plots/NN_*.gp),
# every generated block of EXPERIMENTS.md (by the awk scripts plots/NN_<stage>.awk, each reading
# plots/data/NN_<stage>.csv, and plots/ncu.awk for each Nsight Compute log plots/data/ncu_*.log) and
# README.md's results at a glance (plots/overview.awk), from the files that GPU runs wrote. Needs no
# GPU.
set -eu
cd "$(dirname "$0")/.."

for chart in plots/[0-9]*.gp; do
    gnuplot "$chart"
done

blocks=$(mktemp)
trap 'rm -f "$blocks" "$blocks.md"' EXIT
# splice BLOCKS PAGE: each of PAGE's marked regions replaced by its block of BLOCKS.
splice() {
    awk -f plots/splice.awk "$1" "$2" > "$blocks.md"
    cat "$blocks.md" > "$2"
}
{
    # The claims table gathers rows from every stage's script under this one header. Each row's ID
    # (C1, C2, ...) is fixed in its script, with an anchor (#c1, ...) that text can link to.
    printf '@@ claims\n| ID | claim | measured here | verdict |\n|---|---|---|---|\n'
    for script in plots/[0-9]*.awk; do
        awk -f plots/lib.awk -f "$script" "plots/data/$(basename "$script" .awk).csv"
    done
    for log in plots/data/ncu_*.log; do
        awk -v name="$(basename "$log" .log)" -f plots/ncu.awk "$log"
    done
} > "$blocks"
splice "$blocks" EXPERIMENTS.md
awk -f plots/overview.awk plots/data/02_multipass.csv plots/data/05_online.csv plots/data/06_fused_topk.csv > "$blocks"
splice "$blocks" README.md
echo "make plots: charts in plots/, tables in EXPERIMENTS.md and README.md regenerated from plots/data/*.csv"
