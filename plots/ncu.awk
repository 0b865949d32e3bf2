# A table of the kernels in an Nsight Compute log (plots/data/ncu_*.log, the text that
# `ncu --section SpeedOfLight ...` prints), as a block named profile:<log name>.
# Usage: awk -v name=ncu_02_03_100M -f plots/ncu.awk plots/data/ncu_02_03_100M.log

function flush() {
    if (kernel != "") printf "| `%s` | %s | %s | %s | %s | %s | %s |\n", kernel, grid, regs, duration, dram, l1, sm
    kernel = ""
}
BEGIN {
    print "@@ profile:" name
    print "| kernel | (grid) x (block) | registers per thread | duration (µs, under ncu) | DRAM throughput % | L1/shared-memory throughput % | SM throughput % |"
    print "|---|---|---:|---:|---:|---:|---:|"
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
/^GPU: / { gpu = substr($0, 6); sub(/ \(.*/, "", gpu) }
END { flush(); if (gpu != "") print "\nProfiled on " gpu "." }
