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

# A row's share of the ceiling in %, to more digits than its CSV's pct_ceiling (two decimals, which a
# table's one would round twice: 98.354 written 98.35, then shown 98.3): 100 x gbps / ceiling_gbps,
# the same figure from the row's two other columns; the CSV's own where either is missing.
function pct_ceiling(gbps, ceiling, written) {
    return (gbps != "" && ceiling + 0 > 0) ? 100 * gbps / ceiling : written
}

# 1000 -> 1K, 100000000 -> 100M (as the programs print sizes).
function count(n,    k) {
    for (k = 0; k < 3 && n >= 1000 && n % 1000 == 0; k++) n /= 1000
    return n substr("KMG", k, k > 0)
}

# The provenance line under each generated table: which GPU's run its rows come from, its date, the
# code it measured (its '# code:' line; "not recorded" where the run predates that line) and,
# where the run recorded its stage's sources hash ('# sources:'), whether today's files still hash
# the same. plots/make_plots.sh computes today's hashes by the rule it states (--sources) and hands
# them over as sources_list, "01_naive=<hash> 02_multipass=<hash> ...".
BEGIN {
    n_sources = split(sources_list, sources_w, " ")
    for (i_sources = 1; i_sources <= n_sources; i_sources++) {
        k_sources = index(sources_w[i_sources], "=")
        sources_now[substr(sources_w[i_sources], 1, k_sources - 1)] = substr(sources_w[i_sources], k_sources + 1)
    }
}

# Whether the file being read (a run's CSV or log) is the primary GPU's (make_plots.sh's variable primary names its folder).
function on_primary() { return primary == "" || gpu_folder(FILENAME) == primary }

# The GPU folder of a file of plots/data: "h200" for plots/data/h200/06_fused_topk.csv.
function gpu_folder(path) {
    sub(/^plots\/data\//, "", path)
    sub(/\/.*/, "", path)
    return path
}

# The stage a CSV measured, from its path: the longest stage folder (sources_list) its name begins
# with: "06_fused_topk" for plots/data/h200/06_fused_topk.csv and for a named experiment's
# 06_fused_topk_serving.csv, "02_multipass" for a solution's run, 02_multipass_solution.csv (built
# in the stage's folder); its name without .csv where no folder fits.
function stage_of(path,    s, best) {
    sub(/.*\//, "", path)
    sub(/\.csv$/, "", path)
    best = ""
    for (s in sources_now)
        if (index(path, s) == 1 && length(s) > length(best)) best = s
    return best == "" ? path : best
}

# A run's date and code as the line says them, "2026-11-28T03:26:23Z, code 1a2b3c4, stage sources
# unchanged since" (or "..., stage sources changed since (hash 1a2b3c4d5e6f then, 5e6f7a8b9c0d
# now)"); nothing on the sources where the run recorded no hash.
function run_said(date, code, sources, stage,    s) {
    s = date ", code " (code == "" ? "not recorded" : code)
    if (sources == "" || !(stage in sources_now)) return s
    if (sources == sources_now[stage]) return s ", stage sources unchanged since"
    return s ", stage sources changed since (hash " sources " then, " sources_now[stage] " now)"
}

# The whole line, in italics: "*Rows: H200 run of 2026-11-28T03:26:23Z, code not recorded.*"
function provenance_line(gpu, date, code, sources, stage) {
    return "*Rows: " gpu " run of " run_said(date, code, sources, stage) ".*"
}
