#!/bin/sh
# make plots: regenerates every chart (plots/*.png and *.svg, by the gnuplot scripts plots/NN_*.gp),
# every generated block of EXPERIMENTS.md (by the awk scripts plots/NN_<stage>.awk, each reading
# plots/data/NN_<stage>.csv, plots/claims.awk for the claims that rest on several, and plots/ncu.awk
# for each Nsight Compute log plots/data/ncu_*.log) and README.md's results at a glance
# (plots/overview.awk), from the files that GPU runs wrote. Needs no GPU.
set -eu
cd "$(dirname "$0")/.."

for chart in plots/[0-9]*.gp; do
    gnuplot "$chart"
done

blocks=$(mktemp)
trap 'rm -f "$blocks" "$blocks.all" "$blocks.md"' EXIT
# splice BLOCKS PAGE: each of PAGE's marked regions replaced by its block of BLOCKS.
splice() {
    awk -f plots/splice.awk "$1" "$2" > "$blocks.md"
    cat "$blocks.md" > "$2"
}
{
    for script in plots/[0-9]*.awk; do
        awk -f plots/lib.awk -f "$script" "plots/data/$(basename "$script" .awk).csv"
    done
    awk -f plots/files.awk -f plots/claims.awk plots/data/02_multipass.csv plots/data/04_warp.csv \
        plots/data/06_fused_topk.csv
    for log in plots/data/ncu_*.log; do
        awk -v name="$(basename "$log" .log)" -f plots/ncu.awk "$log"
    done
} > "$blocks.all"
# The claims table gathers rows from several scripts. Each row's ID (C1, C2, ...) is fixed in its
# script, with an anchor (#c1, ...) that text can link to; the table lists the rows by ID.
awk '/^@@ / { claims = $0 == "@@ claims" }
     claims && /^\| <a id="c[0-9]+">/ { id = substr($0, 11) + 0; row[id] = $0; if (id > last) last = id }
     !claims { print }
     END {
         print "@@ claims"; print "| ID | claim | measured here | verdict |"; print "|---|---|---|---|"
         for (id = 1; id <= last; id++) if (id in row) print row[id]
     }' "$blocks.all" > "$blocks"
splice "$blocks" EXPERIMENTS.md
awk -f plots/files.awk -f plots/overview.awk plots/data/02_multipass.csv plots/data/05_online.csv plots/data/06_fused_topk.csv > "$blocks"
splice "$blocks" README.md
echo "make plots: charts in plots/, tables in EXPERIMENTS.md and README.md regenerated from plots/data/*.csv"
