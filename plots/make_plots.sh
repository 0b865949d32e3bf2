#!/bin/sh
# make plots: regenerates every chart (plots/*.png and *.svg, by the gnuplot scripts plots/NN_*.gp),
# every generated block of EXPERIMENTS.md and README.md's results at a glance, from the files that
# GPU runs wrote: one folder of plots/data for each GPU (plots/data/h200/, ...; plots/reproduce.sh
# names a new one). The blocks of EXPERIMENTS.md: the GPUs measured (plots/gpus.awk); each stage's
# setup, tables, findings and claims (plots/NN_<stage>.awk, run on plots/data/<gpu>/NN_<stage>.csv
# of each GPU that has it); the claims that rest on several files (plots/claims.awk); a table for
# each Nsight Compute log plots/data/<gpu>/ncu_*.log (plots/ncu.awk); plots/gather.awk puts the
# claims table and the lines that compare the GPUs together. README.md's: plots/overview.awk.
# Needs no GPU.
set -eu
cd "$(dirname "$0")/.."

# The course's primary GPU, as its folder: the findings, the claims and README.md's overview read its
# runs, and its tables and curves come first. The other GPUs follow in the order of their folders.
primary=h200
[ -d "plots/data/$primary" ] || { echo "make plots: no plots/data/$primary/, the primary GPU's runs" >&2; exit 1; }
gpus=$primary
for dir in plots/data/*/; do
    gpu=$(basename "$dir")
    [ "$gpu" = "$primary" ] || gpus="$gpus $gpu"
done

# runs NAME: plots/data/<gpu>/NAME (NAME may be a pattern) of each GPU that has it, in the order of
# $gpus, one a line.
runs() {
    for gpu in $gpus; do
        for file in plots/data/$gpu/$1; do
            if [ -f "$file" ]; then echo "$file"; fi
        done
    done
}

# Each chart draws every GPU's run of its stage that is there (plots/runs.gp).
for chart in plots/[0-9]*.gp; do
    gnuplot -e "gpus = '$gpus'" "$chart"
done

blocks=$(mktemp)
trap 'rm -f "$blocks" "$blocks.all" "$blocks.md"' EXIT
# splice BLOCKS PAGE: each of PAGE's marked regions replaced by its block of BLOCKS.
splice() {
    awk -f plots/splice.awk "$1" "$2" > "$blocks.md"
    cat "$blocks.md" > "$2"
}
{
    awk -v primary="$primary" -f plots/common.awk -f plots/gpus.awk $(runs '*.csv') $(runs 'ncu_*.log')
    # A stage script runs once for each GPU, the first (lead=1) printing the findings and claims.
    for script in plots/[0-9]*.awk; do
        lead=1
        for csv in $(runs "$(basename "$script" .awk).csv"); do
            awk -v lead=$lead -f plots/common.awk -f plots/lib.awk -f "$script" "$csv"
            lead=0
        done
    done
    awk -v primary="$primary" -f plots/common.awk -f plots/files.awk -f plots/claims.awk $(runs '*.csv')
    for name in $(runs 'ncu_*.log' | sed 's|.*/||; s|\.log$||' | sort -u); do
        lead=1
        for log in $(runs "$name.log"); do
            awk -v name="$name" -v lead=$lead -f plots/common.awk -f plots/ncu.awk "$log"
            lead=0
        done
    done
} > "$blocks.all"
awk -f plots/gather.awk "$blocks.all" > "$blocks"
splice "$blocks" EXPERIMENTS.md
awk -v primary="$primary" -f plots/common.awk -f plots/files.awk -f plots/overview.awk \
    "plots/data/$primary/02_multipass.csv" "plots/data/$primary/05_online.csv" "plots/data/$primary/06_fused_topk.csv" > "$blocks"
splice "$blocks" README.md
echo "make plots: charts in plots/, tables in EXPERIMENTS.md and README.md regenerated from plots/data/<gpu>/"
