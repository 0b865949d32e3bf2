# A table of the kernels in an Nsight Compute log (plots/data/<gpu>/ncu_*.log, the text that
# `ncu --section SpeedOfLight ...` prints), as a block named profile:<log name>, under a line naming
# the GPU, from the 'GPU:' line the stage program printed. plots/make_plots.sh runs it once for each
# GPU that has the log, the primary GPU first (lead=1 for that one), and joins the tables; another
# GPU's than the primary (the variable primary names its folder) is folded in <details>.
# Usage: awk -v name=ncu_02_03_100M -v lead=1 -f plots/common.awk -f plots/ncu.awk plots/data/h200/ncu_02_03_100M.log

function flush() {
    if (kernel != "") rows = rows sprintf("| `%s` | %s | %s | %s | %s | %s | %s |\n", kernel, grid, regs, duration, dram, l1, sm)
    kernel = ""
}
# A kernel's header: "  [void ]name[<template args>](params) (grid)x(block), Context 1, Stream ...".
/^  [^ ].*\), Context [0-9]+, Stream/ {
    flush()
    line = $0
    sub(/^  (void )?/, "", line)
    kernel = substr(line, 1, index(line, "(") - 1)
    match(line, /\([0-9]+, [0-9]+, [0-9]+\)x\([0-9]+, [0-9]+, [0-9]+\)/)
    grid = substr(line, RSTART, RLENGTH)
}
# ncu picks the unit (us, ms); the table is in µs.
/^    Duration / { duration = ($(NF - 1) == "ms") ? 1000 * $NF : $NF }
/^    Registers Per Thread / { regs = $NF }
/^    DRAM Throughput / { dram = $NF }
/^    L1\/TEX Cache Throughput / { l1 = $NF }
/^    Compute \(SM\) Throughput / { sm = $NF }
/^GPU: / { gpu = gpu_name(substr($0, 6)) }
END {
    flush()
    if (gpu == "") { print FILENAME ": no 'GPU:' line, so no GPU to name" > "/dev/stderr"; exit 1 }
    folded = !on_primary()
    print "@@ profile:" name
    if (!lead) print ""
    if (folded) print "<details><summary>Profiled on the <b>" gpu "</b></summary>"
    else print "Profiled on the **" gpu "**:"
    print ""
    print "| kernel | (grid) x (block) | registers per thread | duration (µs, under ncu) | DRAM throughput % | L1/shared-memory throughput % | SM throughput % |"
    print "|---|---|---:|---:|---:|---:|---:|"
    printf "%s", rows
    print ""
    print "*Rows: " gpu " profile; the log records neither date nor code.*"
    if (folded) { print ""; print "</details>" }
}
