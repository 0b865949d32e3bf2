# Shared by the per-stage table scripts (plots/NN_*.awk). Reads one CSV written by a stage program
# with --csv: its '# key: value' lines become meta["key"], the first other line names the columns,
# and every later line is row r, read as val[r, "column"]. The stage script prints blocks in its
# END rule; plots/splice.awk puts each block between its markers in EXPERIMENTS.md.

BEGIN { FS = "," }
/^# / {
    line = substr($0, 3)
    k = index(line, ": ")
    meta[substr(line, 1, k - 1)] = substr(line, k + 2)
    next
}
ncols == 0 { for (i = 1; i <= NF; i++) col[i] = $i; ncols = NF; next }
{
    if (NF != ncols) { printf "%s:%d: %d fields, the header has %d\n", FILENAME, FNR, NF, ncols > "/dev/stderr"; exit 1 }
    nrows++
    for (i = 1; i <= NF; i++) val[nrows, col[i]] = $i
}

# Starts the block that replaces <!-- BEGIN name --> ... <!-- END name --> in EXPERIMENTS.md.
function block(name) { print "@@ " name }

# Where the numbers came from: GPU, CUDA, date, ceiling, command. A --csv path that was absolute
# on the machine that ran it (e.g. /root/out/NN.csv) is shown as the file it became here, csv:
# that machine's folders mean nothing to a reader.
function setup_block(name, csv,    command, n, w, i) {
    block(name)
    print "Measured on **" meta["gpu"] "**, CUDA " meta["cuda"] ", " meta["date"] "; ceiling in the same run: " meta["ceiling"] "."
    n = split(meta["command"], w, " ")
    command = w[1]
    for (i = 2; i <= n; i++) {
        if (w[i - 1] == "--csv" && substr(w[i], 1, 1) == "/") w[i] = csv
        command = command " " w[i]
    }
    print "Command: `" command "` (data: [" csv "](" csv "))."
}

# The launches cell: a library call (cuDNN) records 0, since the program cannot count the kernels
# the library launches; the table says "library" instead of a count that looks like none.
function launches_cell(r) { return val[r, "launches"] == 0 ? "library" : val[r, "launches"] }

# 1000 -> 1K, 100000000 -> 100M (as the programs print sizes).
function count(n,    k, s) {
    s = ""
    for (k = 0; k < 3 && n >= 1000 && n % 1000 == 0; k++) n /= 1000
    return n substr("KMG", k, k > 0)
}

function num(x, f) { return (x == "nan" || x == "inf" || x == "-inf") ? x : sprintf(f, x) }

# The rows r whose column c equals v, as a list "r1 r2 ..." for split().
function rows_where(c, v,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++) if (val[r, c] == v) out = out " " r
    return out
}

function inputs(r) { return val[r, "dist"] " [" val[r, "lo"] ", " val[r, "hi"] "]" }

# Correctness rows of one experiment: size, inputs, variant, sum of outputs, NaN/Inf, error, check.
function accuracy_table(experiment,    m, t, i, r) {
    print "| n | inputs | variant | sum of outputs | NaN/Inf outputs | max rel. error | check |"
    print "|---:|---|---|---:|---:|---:|:---:|"
    m = split(rows_where("experiment", experiment), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        print "| " count(val[r, "cols"]) " | " inputs(r) " | " val[r, "variant"] " | " num(val[r, "row_sum"], "%.6g") " | " \
              val[r, "nonfinite"] " | " num(val[r, "max_rel_err"], "%.1e") " | " val[r, "result"] " |"
    }
}

# The comparison of row r with its baseline: rel is "overhead" (extra time) or "speedup".
function relative(r, rel) {
    if (val[r, "baseline"] == "") return "base"
    if (rel == "overhead") return sprintf("%+.0f %%", 100 * (val[r, "median_ms"] / val[r, "baseline_ms"] - 1))
    return sprintf("%.2f×", val[r, "baseline_ms"] / val[r, "median_ms"])
}

# Timing rows of one experiment; rel is "" (no comparison column), "overhead" or "speedup".
function timing_table(experiment, rel,    m, t, i, r) {
    printf "| n | variant | median ms | min ms | max ms | GB/s | %% of ceiling | bytes/elem | launches | max rel. error | check |%s\n", rel == "" ? "" : " " rel " |"
    printf "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|%s\n", rel == "" ? "" : "---:|"
    m = split(rows_where("experiment", experiment), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s\n", count(val[r, "cols"]), val[r, "variant"],
               num(val[r, "median_ms"], "%.4f"), num(val[r, "min_ms"], "%.4f"), num(val[r, "max_ms"], "%.4f"),
               num(val[r, "gbps"], "%.0f"), num(val[r, "pct_ceiling"], "%.1f"), val[r, "bytes_per_elem"], launches_cell(r),
               num(val[r, "max_rel_err"], "%.1e"), val[r, "result"], rel == "" ? "" : " " relative(r, rel) " |"
    }
}

# The row of `variant` at size n in `experiment` (0 if none).
function row_of(experiment, variant, n,    r) {
    for (r = 1; r <= nrows; r++)
        if (val[r, "experiment"] == experiment && val[r, "variant"] == variant && val[r, "cols"] == n) return r
    return 0
}
