# Shared by every awk script of plots/, loaded first: what a run says of itself, the GPU's name and
# the ceiling it measured, from a CSV's '# gpu:' and '# ceiling:' lines or an Nsight Compute log's
# 'GPU:' line; and sizes as the stage programs print them.

# The GPU's name as the pages and charts show it, from the line that names it ("NVIDIA H200 (sm_90,
# 132 SMs, 63 MB L2)"): without "NVIDIA " and without what follows in parentheses: "H200",
# "H100 80GB HBM3".
function gpu_name(line) {
    sub(/^NVIDIA /, "", line)
    sub(/ \(.*/, "", line)
    return line
}

# The ceiling as the run names it, from its '# ceiling:' line: what comes before the first ';'
# ("device-to-device copy 4246.3 GB/s", or since the fastest-run ceilings "copy (cudaMemcpy or 16 KB
# tiles), fastest run 3156.8 GB/s", for stages 01-05; "read (16-byte loads)[, fastest run] 4403.5
# GB/s" for 06).
function ceiling_text(line) {
    sub(/;.*/, "", line)
    return line
}

# The ceiling in GB/s, from the same line: the number before the first "GB/s". The time model
# (plots/lib.awk, plots/model.gp) divides by it.
function ceiling_gbps(line,    w, n) {
    n = split(substr(line, 1, index(line, " GB/s") - 1), w, " ")
    if (n == 0 || w[n] + 0 <= 0) { printf "%s: no ceiling in GB/s in '# ceiling: %s'\n", FILENAME, line > "/dev/stderr"; exit 1 }
    return w[n] + 0
}

# 1000 -> 1K, 100000000 -> 100M (as the programs print sizes).
function count(n,    k) {
    for (k = 0; k < 3 && n >= 1000 && n % 1000 == 0; k++) n /= 1000
    return n substr("KMG", k, k > 0)
}
