#!/bin/sh
# make plots: regenerates every chart (plots/*.png and *.svg, by the gnuplot scripts plots/NN_*.gp),
# every generated block of EXPERIMENTS.md, README.md's results at a glance and the blocks of the
# stage and solution READMEs and the journals that have markers (06's steps, ...), from the files
# that GPU runs wrote: one folder of plots/data for each GPU (plots/data/h200/, ...;
# plots/reproduce.sh names a new one). The blocks of EXPERIMENTS.md: the GPUs measured
# (plots/gpus.awk); each stage's setup, tables, findings and claims (plots/NN_<stage>.awk, run on
# plots/data/<gpu>/NN_<stage>.csv of each GPU that has it); the claims that rest on several files
# (plots/claims.awk); a table for each Nsight Compute log plots/data/<gpu>/ncu_*.log
# (plots/ncu.awk); plots/gather.awk puts the claims table and the lines that compare the GPUs
# together. README.md's: plots/overview.awk. Every table ends with a line naming its run's GPU,
# date, code and whether the stage's sources changed since (plots/common.awk); the other GPUs'
# tables are folded under the primary's. Needs no GPU.
set -eu
cd "$(dirname "$0")/.."

# The sources hash of a stage, the one home of its rule. A run's CSV names it on its '# sources:'
# line (common/build.mk bakes it in when the stage is built, by `sh plots/make_plots.sh --sources
# NN_stage`), and the line under each of the stage's tables here says whether today's files still
# hash the same. The rule: every file of the stage's folder and its subfolders (solution/ too, for
# its run_solution) named *.c, *.h, *.cu, *.cuh or *.py, outside build/, by its path from the
# repository root, in the C locale's order; sha1sum of them all; the first 12 hex digits of the sha1
# of that list. common/ and the earlier stages' kernels a stage links are not in it: `# code:` names
# them.
sources_hash() {
    find "$1" -name build -prune -o -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.py' \) -print |
        LC_ALL=C sort | xargs sha1sum | sha1sum | cut -c1-12
}
if [ "${1-}" = --sources ]; then
    [ -d "${2-}" ] || { echo "make_plots.sh --sources: give a stage's folder, e.g. 06_fused_topk" >&2; exit 2; }
    sources_hash "$2"
    exit 0
fi

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

# Today's sources hash of each stage, for the line under each table (plots/common.awk).
sources_list=
for stage in 0[1-6]_*/; do
    stage=${stage%/}
    sources_list="$sources_list $stage=$(sources_hash "$stage")"
done
set -- -v primary="$primary" -v sources_list="$sources_list"

blocks=$(mktemp)
trap 'rm -f "$blocks" "$blocks.all" "$blocks.md" "$blocks.used"' EXIT
{
    awk "$@" -f plots/common.awk -f plots/gpus.awk $(runs '*.csv') $(runs 'ncu_*.log')
    # A stage script runs once for each GPU, the first (lead=1) printing the findings and claims.
    for script in plots/[0-9]*.awk; do
        lead=1
        for csv in $(runs "$(basename "$script" .awk).csv"); do
            awk "$@" -v lead=$lead -f plots/common.awk -f plots/lib.awk -f "$script" "$csv"
            lead=0
        done
    done
    awk "$@" -f plots/common.awk -f plots/files.awk -f plots/claims.awk $(runs '*.csv')
    for name in $(runs 'ncu_*.log' | sed 's|.*/||; s|\.log$||' | sort -u); do
        lead=1
        for log in $(runs "$name.log"); do
            awk "$@" -v name="$name" -v lead=$lead -f plots/common.awk -f plots/ncu.awk "$log"
            lead=0
        done
    done
    awk "$@" -f plots/common.awk -f plots/files.awk -f plots/overview.awk \
        "plots/data/$primary/02_multipass.csv" "plots/data/$primary/05_online.csv" "plots/data/$primary/06_fused_topk.csv"
} > "$blocks.all"
awk -f plots/gather.awk "$blocks.all" > "$blocks"

# The pages: EXPERIMENTS.md, README.md, and every stage's or solution's README.md or stage's
# JOURNAL.md with a marked region. Each marked region of a page gets its block (plots/splice.awk); a
# page is rewritten only where that changes it, and one without markers is not touched. Every block
# must land on a page, and every marked region must have its block; a page that fails is left as it
# was, the others are spliced, and make plots fails.
: > "$blocks.used"
failed=
for page in EXPERIMENTS.md README.md 0[1-6]_*/README.md 0[1-6]_*/solution/README.md 0[1-6]_*/JOURNAL.md; do
    [ -f "$page" ] && grep -q '^<!-- BEGIN [^ ]* -->$' "$page" || continue
    if awk -v used="$blocks.used" -f plots/splice.awk "$blocks" "$page" > "$blocks.md"; then
        cmp -s "$blocks.md" "$page" || cat "$blocks.md" > "$page"
    else
        failed=1
    fi
done
sort -u "$blocks.used" > "$blocks.md"
unused=$(sed -n 's/^@@ //p' "$blocks" | sort -u | comm -23 - "$blocks.md")
if [ -n "$unused" ]; then
    echo "make plots: no page has markers for block(s):" $unused >&2
    failed=1
fi
[ -z "$failed" ] || exit 1
echo "make plots: charts in plots/, tables in EXPERIMENTS.md and the READMEs regenerated from plots/data/<gpu>/"
