# Shared by the per-stage table scripts (plots/NN_*.awk), after plots/common.awk. Reads one CSV
# written by a stage program with --csv, plots/data/<gpu>/NN_<stage>.csv: its '# key: value' lines
# become meta["key"], the first other line names the columns, and every later line is row r, read as
# val[r, "column"]. The stage script prints blocks in its END rule; plots/splice.awk puts each block
# between its markers in EXPERIMENTS.md.
#
# plots/make_plots.sh runs a stage script once for each GPU that has the stage's CSV, the primary GPU
# first, and joins the blocks of the same name in that order. It sets lead to 1 for the first of
# those runs, whose findings and claims the page prints; the other runs print their tables and
# ratios.

BEGIN { FS = "," }
/^# / {
    line = substr($0, 3)
    k = index(line, ": ")
    meta[substr(line, 1, k - 1)] = substr(line, k + 2)
    if (substr(line, 1, k - 1) == "ceiling") ceiling = ceiling_gbps(meta["ceiling"])
    next
}
ncols == 0 { for (i = 1; i <= NF; i++) col[i] = $i; ncols = NF; next }
{
    if (NF != ncols) { printf "%s:%d: %d fields, the header has %d\n", FILENAME, FNR, NF, ncols > "/dev/stderr"; exit 1 }
    nrows++
    for (i = 1; i <= NF; i++) val[nrows, col[i]] = $i
    val[nrows, "pct_ceiling"] = pct_ceiling(val[nrows, "gbps"], val[nrows, "ceiling_gbps"], val[nrows, "pct_ceiling"])
}

# The run, as the claims name it: the CSV's path in plots/data without .csv, "h200/01_naive" for
# plots/data/h200/01_naive.csv (plots/files.awk names files the same way); `path` is the file being
# read where none is given.
function run_name(path) {
    if (path == "") path = FILENAME
    sub(/^plots\/data\//, "", path)
    sub(/\.csv$/, "", path)
    return path
}

# Starts the block that replaces <!-- BEGIN name --> ... <!-- END name --> in EXPERIMENTS.md, after
# ending the table the block before it left open (table_end).
function block(name) { table_end(); print "@@ " name }

# Starts a table's block: a line naming the GPU and the ceiling of its run, then the table the
# caller prints, which the next block() or table_end() closes with its provenance line. The tables
# of several GPUs join under one marker, a blank line between them; another GPU's than the primary
# is folded in <details>, its line the summary.
function table_block(name) {
    block(name)
    gpu_part("ceiling in the same run: " ceiling_text(meta["ceiling"]), \
        "the same table; ceiling in its run: " ceiling_text(meta["ceiling"]))
}

# The head of this GPU's part of a block: its name and `shown` for the primary GPU, or its name and
# `folded` as the summary of another's folded part; table_end() ends it.
function gpu_part(shown, folded) {
    if (!lead) print ""
    if (on_primary()) print "**" gpu_name(meta["gpu"]) "**, " shown ":"
    else print "<details><summary><b>" gpu_name(meta["gpu"]) "</b>: " folded "</summary>"
    print ""
    part_open = 1
}

# Ends the part gpu_part() began, if one is open: the line naming the run its rows come from, and
# the end of the fold.
function table_end() {
    if (!part_open) return
    part_open = 0
    print ""
    print provenance_line(gpu_name(meta["gpu"]), meta["date"], meta["code"], meta["sources"], stage_of(FILENAME))
    if (!on_primary()) { print ""; print "</details>" }
}

# Where the numbers came from, one list item for each GPU's run (another GPU's than the primary
# folded): GPU, CUDA, date, code, ceiling, command and the CSV. A --csv path that was absolute on the machine that ran it (e.g. /root/out/NN.csv) is
# shown as the file it became here: that machine's folders mean nothing to a reader. A relative one
# (from the stage's folder, ../plots/data/..., or from the root) that does not name the CSV's
# present path gets a note: the file was written there and has moved since (the runs of one GPU
# went into its own folder, plots/data/<gpu>/, after they were made).
function setup_block(name,    command, n, w, i, path, written, dir) {
    block(name)
    n = split(meta["command"], w, " ")
    command = w[1]
    written = ""
    for (i = 2; i <= n; i++) {
        if (w[i - 1] == "--csv") {
            if (substr(w[i], 1, 1) == "/") w[i] = FILENAME
            else {
                path = w[i]
                sub(/^(\.\.?\/)+/, "", path)
                if (path != FILENAME) written = w[i]
            }
        }
        command = command " " w[i]
    }
    if (written != "") {
        dir = FILENAME; sub(/[^\/]*$/, "", dir)
        path = written; sub(/.*\//, "", path)
        written = "; written as " written ", since moved to " ((dir path == FILENAME) ? dir : FILENAME)
    }
    if (!on_primary()) { print ""; print "<details><summary>The <b>" gpu_name(meta["gpu"]) "</b> run</summary>"; print "" }
    print "- Measured on **" meta["gpu"] "**, CUDA " meta["cuda"] ", " run_said(meta["date"], meta["code"], meta["sources"], \
        stage_of(FILENAME)) "; ceiling in the same run: " meta["ceiling"] "."
    print "  Command: `" command "` (data: [" FILENAME "](" FILENAME ")" written ")."
    if (!on_primary()) { print ""; print "</details>" }
}

# One ratio of this run, for the bullet that compares the GPUs: plots/gather.awk joins each label's
# values, one for each GPU, at the end of the findings block `findings`. Only ratios go there (a % of
# the run's ceiling, a speedup): a time depends on the GPU's bandwidth, clocks and L2, a ratio of
# two times in the same run much less.
function ratio(findings, label, value) {
    block("ratios")
    printf "%s\t%s\t%s\t%s\n", findings, gpu_name(meta["gpu"]), label, value
}

# How a claim's "measured here" cell ends: the run it read, " (h200/01_naive)".
function claim_run() { return " (" run_name() ")" }

# The launches cell: a library call (cuDNN) records 0, since the program cannot count the kernels
# the library launches; the table says "library" instead of a count that looks like none.
function launches_cell(r) { return val[r, "launches"] == 0 ? "library" : val[r, "launches"] }

function num(x, f) { return (x == "nan" || x == "inf" || x == "-inf") ? x : sprintf(f, x) }

# The rows r whose column c equals v, as a list "r1 r2 ..." for split().
function rows_where(c, v,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++) if (val[r, c] == v) out = out " " r
    return out
}

function inputs(r) { return val[r, "dist"] " [" val[r, "lo"] ", " val[r, "hi"] "]" }

# Correctness rows of one experiment: size, inputs, variant, sum of outputs, NaN/Inf, error, check.
# The first column of a table: `head` names it, "n" (the default) or "cols" for a row's length,
# "rows × cols" for the shape.
function size_cell(r, head) { return head == "rows × cols" ? size_of(r) : count(val[r, "cols"]) }

function accuracy_table(experiment, head,    m, t, i, r) {
    if (head == "") head = "n"
    print "| " head " | inputs | variant | sum of outputs | NaN/Inf outputs | max rel. error | check |"
    print "|---:|---|---|---:|---:|---:|:---:|"
    m = split(rows_where("experiment", experiment), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        print "| " size_cell(r, head) " | " inputs(r) " | " val[r, "variant"] " | " num(val[r, "row_sum"], "%.6g") " | " \
              val[r, "nonfinite"] " | " num(val[r, "max_rel_err"], "%.1e") " | " val[r, "result"] " |"
    }
}

# The comparison of row r with its baseline: rel is "overhead" (extra time) or "speedup".
function relative(r, rel) {
    if (val[r, "baseline"] == "") return "base"
    if (rel == "overhead") return sprintf("%+.0f %%", 100 * (val[r, "median_ms"] / val[r, "baseline_ms"] - 1))
    return sprintf("%.2f×", val[r, "baseline_ms"] / val[r, "median_ms"])
}

# The time model: the time in ms that row r's own bytes take at the run's ceiling, with nothing
# else counted (no launch, no latency, no arithmetic). A softmax row moves bytes_per_elem for each
# of its rows x cols elements; a top-K row (stage 06) moves bytes_per_row for each of its rows.
function predicted_ms(r,    bytes) {
    if (ceiling == "") { printf "%s: no '# ceiling:' line, so no time model\n", FILENAME > "/dev/stderr"; exit 1 }
    bytes = ((r, "bytes_per_row") in val) ? val[r, "bytes_per_row"] * val[r, "rows"] \
                                          : val[r, "bytes_per_elem"] * val[r, "rows"] * val[r, "cols"]
    return bytes / (ceiling * 1e9) * 1e3
}

# Measured over predicted: 1 where the bytes explain the time, more where something else costs.
function model_ratio(r) { return val[r, "median_ms"] / predicted_ms(r) }

# A ratio as the tables print it: "0.71×", "1.05×", "30×", "2740×".
function times(x) { return sprintf((x < 10) ? "%.2f×" : "%.0f×", x) }

# A time in ms with at least `decimals` decimals and as many more as two significant digits need:
# 0.2826, 0.00028, 0.0000028 (a model time of a few nanoseconds is still a number).
function ms(x, decimals) {
    while (x < 10 ^ (1 - decimals) && decimals < 12) decimals++
    return sprintf("%." decimals "f", x)
}

# The two model cells of row r: the predicted time, and measured over predicted.
function model_cells(r, decimals) { return ms(predicted_ms(r), decimals) " | " times(model_ratio(r)) }

# Timing rows of one experiment; rel is "" (no comparison column), "overhead" or "speedup". The
# error of each timed row is left to the correctness tables; its check stays.
function timing_table(experiment, rel, head,    m, t, i, r) {
    if (head == "") head = "n"
    printf "| %s | variant | median ms | predicted ms | measured / predicted | min ms | max ms | GB/s | %% of ceiling | bytes/elem | launches | check |%s\n", head, rel == "" ? "" : " " rel " |"
    printf "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|%s\n", rel == "" ? "" : "---:|"
    m = split(rows_where("experiment", experiment), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s\n", size_cell(r, head), val[r, "variant"],
               num(val[r, "median_ms"], "%.4f"), model_cells(r, 4), num(val[r, "min_ms"], "%.4f"), num(val[r, "max_ms"], "%.4f"),
               num(val[r, "gbps"], "%.0f"), num(val[r, "pct_ceiling"], "%.1f"), val[r, "bytes_per_elem"], launches_cell(r),
               val[r, "result"], rel == "" ? "" : " " relative(r, rel) " |"
    }
}

# Measured over predicted for every row of `experiment` at row length n, in table order:
# "naive 1.51×, multipass 3.36×".
function model_at(experiment, n,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++)
        if (val[r, "experiment"] == experiment && val[r, "cols"] == n)
            out = out (out == "" ? "" : ", ") val[r, "variant"] " " times(model_ratio(r))
    return out
}

# Measured over predicted for every row of `variant` in `experiment`, with the size of each:
# "2740× at n = 1K, 277× at 10K, ...".
function model_by_size(experiment, variant,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++)
        if (val[r, "experiment"] == experiment && val[r, "variant"] == variant)
            out = out (out == "" ? "" : ", ") times(model_ratio(r)) " at " (out == "" ? "n = " : "") count(val[r, "cols"])
    return out
}

# A row's size as the findings name it: "100M" for one softmax over n, "8192 × 4096" for rows.
function size_of(r) { return val[r, "rows"] == 1 ? count(val[r, "cols"]) : count(val[r, "rows"]) " × " count(val[r, "cols"]) }

# The least and the largest measured over predicted of `variant` in `experiment`, each with its
# size: "0.71× (8192 × 4096) to 11× (1048576 × 32)"; one of them where both print the same.
function model_range(experiment, variant,    r, lo, hi) {
    lo = hi = 0
    for (r = 1; r <= nrows; r++) {
        if (val[r, "experiment"] != experiment || val[r, "variant"] != variant) continue
        if (!lo || model_ratio(r) < model_ratio(lo)) lo = r
        if (!hi || model_ratio(r) > model_ratio(hi)) hi = r
    }
    if (times(model_ratio(lo)) == times(model_ratio(hi))) return times(model_ratio(lo)) " (" size_of(lo) ")"
    return times(model_ratio(lo)) " (" size_of(lo) ") to " times(model_ratio(hi)) " (" size_of(hi) ")"
}

# The rows of `experiment` faster than their bytes predict, as "block_per_row at 32768 × 1024
# (0.92×), 16384 × 2048 (0.75×)" (a variant named before its first such row); "none" if none.
function below_model(experiment,    r, out, last) {
    out = last = ""
    for (r = 1; r <= nrows; r++) {
        if (val[r, "experiment"] != experiment || model_ratio(r) >= 1) continue
        out = out (out == "" ? "" : ", ") (val[r, "variant"] == last ? "" : val[r, "variant"] " at ") size_of(r) " (" times(model_ratio(r)) ")"
        last = val[r, "variant"]
    }
    return out == "" ? "none" : out
}

# The row of `variant` at size n in `experiment` (0 if none).
function row_of(experiment, variant, n,    r) {
    for (r = 1; r <= nrows; r++)
        if (val[r, "experiment"] == experiment && val[r, "variant"] == variant && val[r, "cols"] == n) return r
    return 0
}

# The logits of row r of a top-K run (stage 06) as the run drew them: uniform [lo, hi), normal
# (mean, sd), zipf (lo, hi).
function logits_cell(r,    lo, hi) {
    lo = val[r, "lo"] + 0; hi = val[r, "hi"] + 0
    if (val[r, "dist"] == "normal") return sprintf("normal (mean %g, sd %g)", (lo + hi) / 2, (hi - lo) / 6)
    if (val[r, "dist"] == "uniform") return sprintf("uniform [%g, %g)", lo, hi)
    return sprintf("%s (%g, %g)", val[r, "dist"], lo, hi)
}
