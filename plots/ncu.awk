# A table of the kernels in an Nsight Compute log (plots/data/ncu_*.log, the text that
# `ncu --section SpeedOfLight ...` prints), as a block named profile:<log name>.
# Usage: awk -v name=ncu_02_03_100M -f plots/ncu.awk plots/data/ncu_02_03_100M.log

function flush() {
    if (kernel != "") printf "| `%s` | %s | %s | %s | %s | %s |\n", kernel, grid, duration, dram, l1, sm
    kernel = ""
}
BEGIN {
    print "@@ profile:" name
    print "| kernel | grid × block | duration (µs, under ncu) | DRAM throughput % | L1/shared-memory throughput % | SM throughput % |"
    print "|---|---|---:|---:|---:|---:|"
}
/^  [A-Za-z_0-9]+\(.*\) \([0-9]+, 1, 1\)x\([0-9]+, 1, 1\)/ {
    flush()
    kernel = substr($1, 1, index($1, "(") - 1)
    match($0, /\([0-9]+, 1, 1\)x\([0-9]+, 1, 1\)/)
    launch = substr($0, RSTART, RLENGTH)
    gsub(/, 1, 1\)/, "", launch); gsub(/\(/, "", launch); sub(/x/, " × ", launch)
    grid = launch
}
/^    Duration / { duration = $NF }
/^    DRAM Throughput / { dram = $NF }
/^    L1\/TEX Cache Throughput / { l1 = $NF }
/^    Compute \(SM\) Throughput / { sm = $NF }
END { flush() }
