# Tables, findings and claims for 06_fused_topk, from plots/data/<gpu>/06_fused_topk.csv.
#
# Globals: the script reads plots/lib.awk's val, nrows, meta and ceiling and make_plots.sh's lead,
# and shares two of its own, the goals' table goal[i, field] for i = 1 .. ngoals (set_goals fills
# it). Every other variable is local to its function, an extra parameter.

# The rows of an experiment with this variant and dtype, as a list "r1 r2 ..." for split().
function topk_rows(experiment, variant, dtype,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++)
        if (val[r, "experiment"] == experiment && val[r, "variant"] == variant && val[r, "dtype"] == dtype)
            out = out " " r
    return out
}

# The row of an experiment for this variant, dtype, row length and K (0 if none).
function topk_row(experiment, variant, dtype, cols, k,    m, t, i) {
    m = split(topk_rows(experiment, variant, dtype), t, " ")
    for (i = 1; i <= m; i++)
        if (val[t[i], "cols"] == cols && val[t[i], "k"] == k) return t[i]
    return 0
}

# A top-K table. predicted ms: the KB the row moves, times rows, at the read ceiling (lib.awk's
# time model), beside the median, with as many decimals as the median shows.
# with_logits: a column naming each row's logits (logits_cell).
function topk_table(experiment, with_logits,    m, t, i, r, d) {
    print "| rows × V | " (with_logits ? "logits | " : "") "dtype | K | variant | median ms | predicted ms " \
        "| measured / predicted | GB/s | % of read ceiling | KB moved per row | check | speedup over base |"
    print "|---|" (with_logits ? "---|" : "") "---|---:|---|---:|---:|---:|---:|---:|---:|:---:|---:|"
    m = split(rows_where("experiment", experiment), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        d = (val[r, "median_ms"] < 0.1) ? 4 : 3
        printf "| %s | %s%s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s |\n", \
            (val[r, "rows"] == 1 ? "1" : count(val[r, "rows"])) " × " val[r, "cols"], \
            with_logits ? logits_cell(r) " | " : "", val[r, "dtype"], \
            val[r, "k"], val[r, "variant"], num(val[r, "median_ms"], "%." d "f"), model_cells(r, d), \
            num(val[r, "gbps"], "%.0f"), num(val[r, "pct_ceiling"], "%.1f"), val[r, "bytes_per_row"] / 1000, \
            val[r, "result"], relative(r, "speedup")
    }
}

# The goals, the issue's and a server's shapes', one add_goal each, in the order the pages state
# them: its block (issue: the goals block, before the runs to report; issue1: the goals block, after
# them; serving: findings:06_serving), its shape, its bound as its verdict states it ("" where it
# has none), what it names ("title: name" where goals of one title share a line) and its rows. The
# bound's first three words are the test, the threshold and its unit: "≥ 90 %" a share of the read
# ceiling, "≤ 8 µs" a time a token. Rows: "experiment variants dtypes V K [least rows]", variants
# and dtypes comma lists in the order the line lists them, "*" any. Shapes: row, one row's time,
# share and speedup; ceiling, one row's share; batches, each row's share, met where all are; token,
# each row's time a token, met where the first variant's are; order, no row slower than a larger
# batch of its V and dtype.
function set_goals() {
    ngoals = 0
    add_goal("issue", "row", "≥ 90 % of the ceiling",
        "8192 × 50257 float32, K = 10, fast", "workload fast float32 50257 10")
    add_goal("issue", "row", "≥ 90 % of the ceiling",
        "8192 × 50257 float32, K = 50, fast", "workload fast float32 50257 50")
    add_goal("issue", "row", "≥ 85 % of the ceiling",
        "8192 × 50257 bf16, K = 10, fast", "dtype fast bf16 50257 10")
    add_goal("issue", "row", "≥ 85 % of the ceiling",
        "8192 × 50257 bf16, K = 50, fast", "dtype fast bf16 50257 50")
    add_goal("issue", "row", "≥ 70 % of the ceiling",
        "8192 × 50257 float32, K = 256, fast", "k_sweep fast float32 50257 256")
    add_goal("issue1", "row", "≤ 8 µs",
        "batch 1, V = 50257, K = 50, fast", "batch1 fast float32 50257 50")
    add_goal("issue1", "row", "≤ 8 µs",
        "batch 1, V = 128256, K = 50, fast", "batch1 fast float32 128256 50")
    add_goal("issue1", "row", "≤ 8 µs",
        "batch 1, V = 262144, K = 50, fast", "batch1 fast float32 262144 50")
    add_goal("serving", "batches", "≥ 80 % of the read ceiling",
        "Batches from 256 rows up at V = 128256, fast", "batch_sweep fast float32,bf16 128256 * 256")
    add_goal("serving", "order", "",
        "Never slower than at a larger batch", "batch_sweep fast * * *")
    add_goal("serving", "token", "≤ 4 µs",
        "The decode loop at V = 128256, K = 50, time a token", "decode_loop fast,fast_no_pdl,torch float32 128256 *")
    add_goal("serving", "ceiling", "≥ 85 %",
        "8192 × 50257 float32, fast: K = 256", "k_sweep fast float32 50257 256")
    add_goal("serving", "ceiling", "≥ 60 %",
        "8192 × 50257 float32, fast: K = 1024", "k_sweep fast float32 50257 1024")
    add_goal("serving", "ceiling", "≥ 85 %",
        "8192 × 50257, K = 50, fast: bf16", "dtype fast bf16 50257 50")
    add_goal("serving", "ceiling", "≥ 85 %",
        "8192 × 50257, K = 50, fast: fp16", "dtype fast fp16 50257 50")
}

# Goal ngoals + 1, as goal[i, field]: block, shape, bound, test (≥ or ≤), threshold, unit (% or
# µs), what, title and name (what split at ": "), rows.
function add_goal(blk, shape, bound, what, rows,    i, w, k) {
    i = ++ngoals
    goal[i, "block"] = blk; goal[i, "shape"] = shape; goal[i, "bound"] = bound
    split(bound, w, " ")
    goal[i, "test"] = w[1]; goal[i, "threshold"] = w[2] + 0; goal[i, "unit"] = w[3]
    k = index(what, ": ")
    goal[i, "what"] = what
    goal[i, "title"] = k ? substr(what, 1, k - 1) : what
    goal[i, "name"] = k ? substr(what, k + 2) : ""
    goal[i, "rows"] = rows
}

# Word n of goal i's rows: 1 the experiment, 2 its variants, 3 its dtypes, 4 V, 5 K, 6 the least
# number of rows.
function goal_spec(i, n,    s) {
    split(goal[i, "rows"], s, " ")
    return s[n]
}

# Goal i's rows, as a list "r1 r2 ..." for split(): for each of its variants, and within it each of
# its dtypes, the rows of its experiment in the CSV's order, at its V and K, from its least rows up.
function goal_rows(i,    s, v, d, nv, nd, a, b, r, out) {
    split(goal[i, "rows"], s, " ")
    nv = split(s[2], v, ","); nd = split(s[3], d, ",")
    out = ""
    for (a = 1; a <= nv; a++)
        for (b = 1; b <= nd; b++)
            for (r = 1; r <= nrows; r++)
                if (val[r, "experiment"] == s[1] && (v[a] == "*" || val[r, "variant"] == v[a]) && \
                    (d[b] == "*" || val[r, "dtype"] == d[b]) && (s[4] == "*" || val[r, "cols"] + 0 == s[4] + 0) && \
                    (s[5] == "*" || val[r, "k"] + 0 == s[5] + 0) && val[r, "rows"] + 0 >= s[6] + 0)
                    out = out " " r
    return out
}

# Row r's time a token in µs: its median over its rows (a batch of one's is its median).
function token_us(r) { return 1000 * val[r, "median_ms"] / val[r, "rows"] }

# A time in ms as µs with one decimal: "8.8".
function us(x) { return sprintf("%.1f", 1000 * x) }

# Whether row r meets goal i's bound, on its share of the read ceiling (%) or its time a token (µs).
function goal_meets(i, r,    x) {
    x = goal[i, "unit"] == "µs" ? token_us(r) : val[r, "pct_ceiling"] + 0
    return goal[i, "test"] == "≤" ? x <= goal[i, "threshold"] : x >= goal[i, "threshold"]
}

# Row r as goal i's line lists it: "0.3772 ms, 96.9 % of the read ceiling, 60.43× over unfused"
# (row), "75.9 %" (ceiling), "float32 256 rows 46.0 %" (batches), "fast 5.84 µs" (token).
function goal_item(i, r,    shape, share) {
    shape = goal[i, "shape"]
    share = num(val[r, "pct_ceiling"], "%.1f") " %"
    if (shape == "row")
        return num(val[r, "median_ms"], "%.4f") " ms, " share " of the read ceiling, " \
            relative(r, "speedup") " over unfused"
    if (shape == "batches") return val[r, "dtype"] " " val[r, "rows"] " rows " share
    if (shape == "token") return val[r, "variant"] " " sprintf("%.2f", token_us(r)) " µs"
    return share
}

# The rows t[1..m] slower than a larger batch of their V and dtype, each with the first such
# batch's median and its fastest and slowest timed runs, so that the reader can see whether the
# medians' order is outside their run-to-run spread: "1 × 50257 float32 (8.8 µs) slower than 2
# rows (8.5 µs, its runs 7.9–9.5); ...".
function slower_rows(t, m,    i, j, r, q, out) {
    out = ""
    for (i = 1; i <= m; i++) {
        r = t[i]
        for (j = 1; j <= m; j++) {
            q = t[j]
            if (val[q, "cols"] == val[r, "cols"] && val[q, "dtype"] == val[r, "dtype"] && \
                val[q, "rows"] + 0 > val[r, "rows"] + 0 && val[q, "median_ms"] + 0 < val[r, "median_ms"] + 0) {
                out = out (out == "" ? "" : "; ") val[r, "rows"] " × " val[r, "cols"] " " val[r, "dtype"] \
                    " (" us(val[r, "median_ms"]) " µs) slower than " val[q, "rows"] " rows (" \
                    us(val[q, "median_ms"]) " µs, its runs " us(val[q, "min_ms"]) "–" us(val[q, "max_ms"]) ")"
                break
            }
        }
    }
    return out
}

# Goal i on this run: res["items"], what its line lists of its rows ("" if nothing); res["found"],
# whether the run has its rows; res["ok"], whether it is met.
function judge(i, res,    m, t, j, r, first, n) {
    m = split(goal_rows(i), t, " ")
    if (goal[i, "shape"] == "order") {
        res["found"] = rows_where("experiment", goal_spec(i, 1)) != ""
        res["items"] = slower_rows(t, m)
        res["ok"] = res["items"] == ""
        return
    }
    if (goal[i, "shape"] == "row" || goal[i, "shape"] == "ceiling") m = m > 0   # its first row only
    split(goal_spec(i, 2), first, ",")
    res["items"] = ""; res["found"] = m > 0; res["ok"] = 1
    n = 0
    for (j = 1; j <= m; j++) {
        r = t[j]
        res["items"] = res["items"] (j > 1 ? ", " : "") goal_item(i, r)
        if (val[r, "variant"] != first[1]) continue
        n++
        if (!goal_meets(i, r)) res["ok"] = 0
    }
    if (n == 0) res["ok"] = 0
}

# A verdict: "met" or "NOT met"; bold, as the lines state it.
function met(ok) { return ok ? "met" : "NOT met" }
function verdict(ok) { return "**" met(ok) "**" }

# Goal i's part of its line, after "title: ": its name, what it measured, its bound and its
# verdict, as its shape states them: "K = 256 75.9 % (goal ≥ 85 %: **NOT met**)" (ceiling),
# "**NOT met**: ..." (no bound), else "...: items. Goal ≥ 80 % of the read ceiling: **met**", the
# variant judged named after the bound where the rows have several; "no rows yet" and the bound
# where the run has none.
function goal_stated(i,    res, name, b, nv, v) {
    judge(i, res)
    b = goal[i, "bound"]
    name = goal[i, "name"] == "" ? "" : goal[i, "name"] " "
    if (goal[i, "shape"] == "ceiling")
        return name (res["found"] ? res["items"] " (goal " b ": " verdict(res["ok"]) ")" : "no row (goal " b ")")
    if (!res["found"]) return name "no rows yet" (b == "" ? "" : ". Goal " b)
    if (b == "") return name verdict(res["ok"]) (res["items"] == "" ? "" : ": " res["items"])
    nv = split(goal_spec(i, 2), v, ",")
    return name res["items"] ". Goal " b (nv > 1 ? " (" v[1] ")" : "") ": " verdict(res["ok"])
}

# The goals of block blk, a line each, "- title: part.", where goals of one title share a line,
# their parts joined by ", ".
function goal_lines(blk,    i, line, title) {
    line = title = ""
    for (i = 1; i <= ngoals; i++) {
        if (goal[i, "block"] != blk) continue
        if (line != "" && goal[i, "title"] == title) {
            line = line ", " goal_stated(i)
            continue
        }
        if (line != "") print line "."
        title = goal[i, "title"]
        line = "- " title ": " goal_stated(i)
    }
    if (line != "") print line "."
}

# What goal i judges, as measured: "72.5 % of the read ceiling", "9.2 µs".
function goal_measured(i,    t, r) {
    split(goal_rows(i), t, " ")
    r = t[1]
    if (goal[i, "unit"] == "µs") return sprintf("%.1f µs", token_us(r))
    return num(val[r, "pct_ceiling"], "%.1f") " % of the read ceiling"
}

# Every run's verdict on each of the issue's goals, for plots/gather.awk: where another GPU's run
# meets a goal that the lead run misses, or misses one it meets, the goals block ends with a line
# that says so.
function goal_verdicts(    i, res) {
    block("goals")
    for (i = 1; i <= ngoals; i++) {
        if (goal[i, "block"] == "serving") continue
        judge(i, res)
        printf "findings:06_goals\t%s\t%s\t%s\t%s\n", gpu_name(meta["gpu"]), goal[i, "what"], met(res["ok"]), \
            goal_measured(i)
    }
}

# The goals block: the issue's goals, the runs it asks to have reported (K = 1024, and PyTorch's
# rows, where torch_topk.py added them to the CSV), then its goals for a batch of one.
function goals_block(V,    r, i, k, pt, px) {
    block("findings:06_goals")
    goal_lines("issue")
    r = topk_row("k_sweep", "fast", "float32", V, 1024)
    printf "- 8192 × 50257 float32, K = 1024, fast (to report): %s ms, %s %% of the read ceiling, " \
        "%s over unfused.\n", num(val[r, "median_ms"], "%.3f"), num(val[r, "pct_ceiling"], "%.1f"), \
        relative(r, "speedup")
    for (i = 1; i <= 2; i++) {
        k = i == 1 ? 10 : 50
        pt = topk_row("workload", "torch", "float32", V, k); px = topk_row("workload", "fast", "float32", V, k)
        if (pt && px)
            printf "- 8192 × 50257 float32, K = %d, torch.topk(torch.softmax(x)) (to report): %s ms; " \
                "fast is %.1f× faster.\n", k, num(val[pt, "median_ms"], "%.3f"), \
                val[pt, "median_ms"] / val[px, "median_ms"]
    }
    goal_lines("issue1")
}

# A server's shapes against the issue's goals for them, as measured, or "no rows yet".
function serving_goals() {
    block("findings:06_serving")
    gpu_part("against its own read ceiling", "the same goals, against its own read ceiling")
    goal_lines("serving")
}

# The steps of 06_fused_topk/README.md, from the primary GPU's run: at 8192 × V float32, K = 10 and
# then K = 50, each of unfused, fused, threshold and fast that the workload measured, with its
# median, its share of the read ceiling and its speed-up over the row before (none for the first row
# of a K). A variant the run lacks is left out.
function steps_block(V,    i, j, k, r, prev, nv, v) {
    block("steps:06_fused_topk")
    print "| K | step | median ms | % of read ceiling | speed-up over the row before |"
    print "|---:|---|---:|---:|---:|"
    nv = split("unfused fused threshold fast", v, " ")
    for (i = 1; i <= 2; i++) {
        k = i == 1 ? 10 : 50
        prev = 0
        for (j = 1; j <= nv; j++) {
            if (!(r = topk_row("workload", v[j], "float32", V, k))) continue
            printf "| %d | %s | %s | %s | %s |\n", k, v[j], num(val[r, "median_ms"], "%.3f"), \
                num(val[r, "pct_ceiling"], "%.1f"), prev ? sprintf("%.2f×", val[prev, "median_ms"] / val[r, "median_ms"]) : ""
            prev = r
        }
    }
    print ""
    print provenance_line(gpu_name(meta["gpu"]), meta["date"], meta["code"], meta["sources"], stage_of(FILENAME))
}


# A row's median time, its speedup over its baseline, or its median over the time its bytes predict
# (what: "median_ms", "speedup" or "model").
function measure(r, what) {
    if (what == "speedup") return val[r, "baseline_ms"] / val[r, "median_ms"]
    return what == "model" ? model_ratio(r) : val[r, "median_ms"]
}

# The least and the largest `what` (times scale) over an experiment's rows of one variant and dtype,
# printed with format f: one number where both print the same, else "least–largest"; "" if no row.
function measure_span(experiment, variant, dtype, what, scale, f,    m, t, i, x, lo, hi, a, b) {
    m = split(topk_rows(experiment, variant, dtype), t, " ")
    if (m == 0) return ""
    for (i = 1; i <= m; i++) {
        x = measure(t[i], what)
        if (i == 1 || x < lo) lo = x
        if (i == 1 || x > hi) hi = x
    }
    a = sprintf(f, lo * scale); b = sprintf(f, hi * scale)
    return a == b ? a : a "–" b
}

# Measured over predicted for an experiment's rows of one variant and dtype, along `column` (K or
# the row length), named `name` before the first: "1.02× at K = 1, 1.03× at 10, ...".
function model_along(experiment, variant, dtype, column, name,    m, t, i, out) {
    out = ""
    m = split(topk_rows(experiment, variant, dtype), t, " ")
    for (i = 1; i <= m; i++)
        out = out (out == "" ? "" : ", ") times(model_ratio(t[i])) " at " (i == 1 ? name " = " : "") val[t[i], column]
    return out
}

# The Ks of an experiment's rows of one variant and dtype whose check did not pass, as "10, 50".
function not_passing(experiment, variant, dtype,    m, t, i, out) {
    out = ""
    m = split(topk_rows(experiment, variant, dtype), t, " ")
    for (i = 1; i <= m; i++)
        if (val[t[i], "result"] != "PASS") out = out (out == "" ? "" : ", ") val[t[i], "k"]
    return out
}

# The numbers that the prose under the tables explains.
function findings(V,    i, m, t, r, line, failed, b16, f32, split_us, torch_ms, x) {
    block("findings:06_fused_topk")
    r = topk_row("k_sweep", "torch", "float32", V, 10)
    if (r) {
        failed = not_passing("k_sweep", "torch", "float32")
        printf "- torch.topk(torch.softmax(x), k), float32, K = 1 to 1024: %s ms, %s× faster than unfused; " \
            "fast is %.1f× faster than it at K = 10.%s\n", \
            measure_span("k_sweep", "torch", "float32", "median_ms", 1, "%.1f"), \
            measure_span("k_sweep", "torch", "float32", "speedup", 1, "%.1f"), \
            val[r, "median_ms"] / val[topk_row("k_sweep", "fast", "float32", V, 10), "median_ms"], \
            failed == "" ? "" : " Its check fails at K = " failed "."
    }
    line = ""
    m = split(topk_rows("k_sweep", "fast", "float32"), t, " ")
    for (i = 1; i <= m; i++)
        line = line (line == "" ? "" : ", ") "K = " val[t[i], "k"] " " num(val[t[i], "pct_ceiling"], "%.1f") " %"
    printf "- fast, float32, against the read ceiling: %s.\n", line
    b16 = topk_row("dtype", "fast", "bf16", V, 10); f32 = topk_row("workload", "fast", "float32", V, 10)
    printf "- 16-bit logits, fast: bf16 K = 10 %s %% of the ceiling, %.2f× faster than float32 K = 10 for " \
        "half the bytes; bf16 K = 50 %s %%; fp16 K = 10 %s %%, K = 50 %s %%.\n", \
        num(val[b16, "pct_ceiling"], "%.1f"), val[f32, "median_ms"] / val[b16, "median_ms"], \
        num(val[topk_row("dtype", "fast", "bf16", V, 50), "pct_ceiling"], "%.1f"), \
        num(val[topk_row("dtype", "fast", "fp16", V, 10), "pct_ceiling"], "%.1f"), \
        num(val[topk_row("dtype", "fast", "fp16", V, 50), "pct_ceiling"], "%.1f")
    split_us = measure_span("batch1", "fast_split", "float32", "median_ms", 1000, "%.1f") # none where clusters are not
    torch_ms = measure_span("batch1", "torch", "float32", "median_ms", 1, "%.2f")
    printf "- A batch of one, K = 50, V = 50257 to 262144: fast %s µs%s, fast_row (one warp for the row) %s ms, " \
        "unfused %s ms%s.\n", \
        measure_span("batch1", "fast", "float32", "median_ms", 1000, "%.1f"), \
        split_us == "" ? "" : " (fast_split " split_us " µs)", \
        measure_span("batch1", "fast_row", "float32", "median_ms", 1, "%.2f"), \
        measure_span("batch1", "unfused", "float32", "median_ms", 1, "%.2f"), \
        torch_ms == "" ? "" : ", torch " torch_ms " ms"
    x = topk_row("k_sweep", "fast", "float32", V, 10)
    printf "- Measured over the time the bytes each row moves take at the read ceiling, float32, %s × %s: " \
        "fast %s; fused %s; unfused %s×%s. 16-bit logits, fast: bf16 %s; fp16 %s. " \
        "A batch of one, K = 50: fast %s.\n", \
        count(val[x, "rows"]), V, model_along("k_sweep", "fast", "float32", "k", "K"), \
        model_along("k_sweep", "fused", "float32", "k", "K"), \
        measure_span("k_sweep", "unfused", "float32", "model", 1, "%.2f"), \
        r ? ", torch " measure_span("k_sweep", "torch", "float32", "model", 1, "%.2f") "×" : "", \
        model_along("dtype", "fast", "bf16", "k", "K"), model_along("dtype", "fast", "fp16", "k", "K"), \
        model_along("batch1", "fast", "float32", "cols", "V")
}

# The libraries beside fast, shape by shape: library (CUB's batched top-K, stage 05's statistic, the
# K sorted) computes fast's answer; cub_topk and flashinfer the K logits alone, unsorted; torch,
# where torch_topk.py added its rows, torch.topk(torch.softmax(x)), sorted. Ties go to the lower
# index in all but torch. The row of `variant` on fast's row's shape, or 0.
function same_shape(f, variant,    r) {
    for (r = 1; r <= nrows; r++)
        if (val[r, "variant"] == variant && val[r, "experiment"] == val[f, "experiment"] && \
            val[r, "rows"] == val[f, "rows"] && val[r, "cols"] == val[f, "cols"] && \
            val[r, "dtype"] == val[f, "dtype"] && val[r, "k"] == val[f, "k"] && val[r, "dist"] == val[f, "dist"])
            return r
    return 0
}

function shape_text(f) {
    return (val[f, "rows"] == 1 ? "1 × " : "") size_of(f) " " val[f, "dtype"] ", K = " val[f, "k"] ", " val[f, "dist"]
}

# A cell: the library's median ms and fast's speedup over it, or "–" where the run lacks it.
function library_cell(f, variant,    r) {
    if (!(r = same_shape(f, variant))) return "–"
    return num(val[r, "median_ms"], val[r, "median_ms"] < 0.1 ? "%.4f" : "%.3f") " (" \
        times(val[r, "median_ms"] / val[f, "median_ms"]) ")"
}

# Row f's shape (rows, V, dtype, K, logits) when it is `variant`'s in an experiment the libraries
# ran in, else "".
function served_shape(f, variant) {
    if (val[f, "variant"] != variant || val[f, "experiment"] !~ /^(workload|k_sweep|dtype|batch1|batch_sweep|dist|dist_batch)$/)
        return ""
    return val[f, "rows"] SUBSEP val[f, "cols"] SUBSEP val[f, "dtype"] SUBSEP val[f, "k"] SUBSEP val[f, "dist"]
}

# Where the run has fast_logits' rows (fast without its softmax): its count against the top-K alone
# (cub_topk, flashinfer) over every shape where both ran, into la_shapes and la_lost (each shape
# where one was faster, joined by "; ").
function logits_alone_tally(    f, r, key, seen, best) {
    la_shapes = 0; la_lost = ""
    for (f = 1; f <= nrows; f++) {
        if ((key = served_shape(f, "fast_logits")) == "" || key in seen) continue
        best = same_shape(f, "cub_topk")
        if ((r = same_shape(f, "flashinfer")) && (!best || val[r, "median_ms"] < val[best, "median_ms"])) best = r
        if (!best) continue
        seen[key] = 1
        la_shapes++
        if (val[best, "median_ms"] < val[f, "median_ms"])
            la_lost = la_lost (la_lost == "" ? "" : "; ") shape_text(f) ": " val[best, "variant"] " " \
                times(val[f, "median_ms"] / val[best, "median_ms"]) " faster"
    }
}

# The tally's number of shapes where fast_logits was the fastest.
function logits_alone_wins(    w) { return la_shapes - (la_lost == "" ? 0 : split(la_lost, w, "; ")) }

# The table of chosen shapes, then the count over every shape of the run where fast and a library
# both ran, naming each shape where a library was faster. The same count, in one sentence, for the
# top README (block libraries_claim).
function libraries_block(    picks, n, p, f, j, r, w, lib, shapes, lost, seen, key, best, nlib, nlost, x, lo, hi, \
                         fewest, most, winners, who) {
    nlib = split("library cub_topk flashinfer torch", lib, " ")
    shapes = 0; lost = ""
    for (f = 1; f <= nrows; f++) {
        if ((key = served_shape(f, "fast")) == "" || key in seen) continue
        best = 0
        for (j = 1; j <= nlib; j++)
            if ((r = same_shape(f, lib[j])) && (!best || val[r, "median_ms"] < val[best, "median_ms"]))
                best = r
        if (!best) continue
        seen[key] = 1
        shapes++
        if (val[best, "median_ms"] < val[f, "median_ms"]) {
            lost = lost (lost == "" ? "" : "; ") shape_text(f) ": " val[best, "variant"] " " \
                times(val[f, "median_ms"] / val[best, "median_ms"]) " faster"
            x = val[f, "median_ms"] / val[best, "median_ms"]
            if (!nlost++ || x < lo) lo = x
            if (nlost == 1 || x > hi) hi = x
            if (nlost == 1 || val[f, "rows"] + 0 < fewest) fewest = val[f, "rows"] + 0
            if (nlost == 1 || val[f, "rows"] + 0 > most) most = val[f, "rows"] + 0
            if (!(val[best, "variant"] in winners)) { winners[val[best, "variant"]] = 1; who = who (who == "" ? "" : ", ") val[best, "variant"] }
        }
    }
    block("libraries:06_fused_topk")
    if (!shapes) {
        print "No rows yet: this run has no library rows (a build without CCCL 3.6 leaves them out)."
    } else {
        print "| shape | fast ms | library: the same answer (fast's speedup) | cub_topk: the logits alone, unsorted | " \
            "flashinfer: the logits alone, unsorted | torch.topk(torch.softmax(x)) |"
        print "|---|---:|---:|---:|---:|---:|"
        n = split("workload,8192,50257,float32,10,uniform workload,8192,50257,float32,50,uniform " \
            "k_sweep,8192,50257,float32,1024,uniform dtype,8192,50257,bf16,50,uniform " \
            "batch1,1,128256,float32,50,uniform batch_sweep,8,128256,float32,50,uniform " \
            "batch_sweep,64,50257,float32,50,uniform batch_sweep,256,128256,float32,50,uniform " \
            "batch_sweep,2048,128256,float32,50,uniform dist,8192,50257,float32,50,normal " \
            "dist,8192,50257,float32,50,zipf dist_batch,1,128256,float32,50,normal " \
            "dist_batch,256,128256,float32,50,zipf", picks, " ")
        for (p = 1; p <= n; p++) {
            split(picks[p], w, ",")
            for (f = 1; f <= nrows; f++)
                if (val[f, "variant"] == "fast" && val[f, "experiment"] == w[1] && val[f, "rows"] == w[2] && \
                    val[f, "cols"] == w[3] && val[f, "dtype"] == w[4] && val[f, "k"] == w[5] && val[f, "dist"] == w[6])
                    break
            if (f > nrows) continue
            printf "| %s | %s | %s | %s | %s | %s |\n", shape_text(f), \
                num(val[f, "median_ms"], val[f, "median_ms"] < 0.1 ? "%.4f" : "%.3f"), library_cell(f, "library"), \
                library_cell(f, "cub_topk"), library_cell(f, "flashinfer"), library_cell(f, "torch")
        }
        print ""
        printf "Over all %d shapes of the run with a library row, fast is the fastest at %d%s\n", shapes, \
            shapes - split(lost, w, "; "), lost == "" ? "." : "; not at " lost "."
        logits_alone_tally()
        if (la_shapes)
            printf "\nWithout its softmax (`fast_logits`: the top-K alone, sorted), fast is the fastest at %d of %d shapes%s\n", \
                logits_alone_wins(), la_shapes, la_lost == "" ? "." : "; not at " la_lost "."
    }
    block("libraries_claim")
    if (!shapes) {
        print "The libraries' rows are not in this run (they need CCCL 3.6 at build time)."
    } else {
        printf "Beside the libraries, in the same run ([stage 06](06_fused_topk/fast/README.md#the-libraries-" \
            "beside-fast)), fast is the fastest at %d of %d shapes (rows, V, dtype, K, logits)%s.\n", \
            shapes - nlost, shapes, !nlost ? "" : sprintf("; at the other %d (%s rows) %s%s is %s faster", nlost, \
                fewest == most ? fewest : fewest " to " most, who, who ~ /library|torch/ ? "" : " (logits alone)", \
                lo == hi ? times(lo) : sprintf("%.2f–%s", lo, times(hi)))
        if (la_shapes)
            printf "Without its softmax (`fast_logits`), against the top-K alone: the fastest at %d of %d.\n", \
                logits_alone_wins(), la_shapes
        print ""
        print provenance_line(gpu_name(meta["gpu"]), meta["date"], meta["code"], meta["sources"], stage_of(FILENAME))
    }
}

# A server's shapes (the batch sweep and the decode loop): a table of this run's rows, or a line
# saying it has none.
function no_rows_yet(experiment) {
    if (rows_where("experiment", experiment) != "") return 0
    print "No rows yet: this run's CSV has no `" experiment "` rows."
    return 1
}

# The decode loop: each row a CUDA graph of `rows` batches of one; its time is the whole replay's.
function decode_table(    m, t, i, r) {
    print "| V | dtype | K | variant | tokens | replay median ms | µs a token | GB/s | % of read ceiling " \
        "| check | speedup |"
    print "|---:|---|---:|---|---:|---:|---:|---:|---:|:---:|---:|"
    m = split(rows_where("experiment", "decode_loop"), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        printf "| %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s |\n", val[r, "cols"], val[r, "dtype"], \
            val[r, "k"], val[r, "variant"], val[r, "rows"], num(val[r, "median_ms"], "%.3f"), \
            1000 * val[r, "median_ms"] / val[r, "rows"], num(val[r, "gbps"], "%.0f"), \
            num(val[r, "pct_ceiling"], "%.1f"), val[r, "result"], relative(r, "speedup")
    }
}

# The stage's tables, each under its run's line; a server's shapes may have no rows yet.
function tables() {
    setup_block("setup:06_fused_topk")
    table_block("table:06_workload")
    topk_table("workload")
    table_block("table:06_k_sweep")
    topk_table("k_sweep")
    table_block("table:06_dtype")
    topk_table("dtype")
    table_block("table:06_batch1")
    topk_table("batch1")
    table_block("table:06_batch_sweep")
    if (!no_rows_yet("batch_sweep")) topk_table("batch_sweep")
    table_block("table:06_dist")
    if (!no_rows_yet("dist")) { topk_table("dist", 1); print ""; topk_table("dist_batch", 1) }
    table_block("table:06_decode_loop")
    if (!no_rows_yet("decode_loop")) decode_table()
    table_block("table:06_sample")
    if (!no_rows_yet("sample")) topk_table("sample")
}

# This run's ratios at 8192 × V, K = 10, for the line that compares the GPUs (plots/gather.awk).
function ratios(V,    f, x, t, b16, at) {
    f = topk_row("workload", "fused", "float32", V, 10); x = topk_row("workload", "fast", "float32", V, 10)
    t = topk_row("workload", "torch", "float32", V, 10); b16 = topk_row("dtype", "fast", "bf16", V, 10)
    at = "findings:06_fused_topk"
    ratio(at, "fast's % of the read ceiling, float32, K = 10", num(val[x, "pct_ceiling"], "%.1f"))
    ratio(at, "bf16, K = 10", num(val[b16, "pct_ceiling"], "%.1f"))
    ratio(at, "fused's % of the read ceiling, float32, K = 10", num(val[f, "pct_ceiling"], "%.1f"))
    ratio(at, "fast over unfused, K = 10", relative(x, "speedup"))
    # PyTorch's rows are there when torch_topk.py added them.
    if (t) ratio(at, "fast over torch, K = 10", times(val[t, "median_ms"] / val[x, "median_ms"]))
    if (t) ratio(at, "fused over torch, K = 10", times(val[t, "median_ms"] / val[f, "median_ms"]))
}

# The claims C7-C10, from the rows at 8192 × V, K = 10.
function claims(V,    u, f, x, t, ft) {
    u = topk_row("workload", "unfused", "float32", V, 10); f = topk_row("workload", "fused", "float32", V, 10)
    x = topk_row("workload", "fast", "float32", V, 10); t = topk_row("workload", "torch", "float32", V, 10)
    block("claims")
    if (!t) { # PyTorch's rows are the optional torch_topk.py's
        printf "| <a id=\"c7\"></a>C7 | A softmax written out and then read by a top-K moves 3× the bytes of a fused " \
            "kernel that reads the logits once | this course's unfused path, which sorts whole rows, %.0f KB per " \
            "row against %.0f KB fused (%.1f×); PyTorch's rows are not in this run%s | a full sort moves more " \
            "than 3×; PyTorch's path not measured in this run |\n", val[u, "bytes_per_row"] / 1000, \
            val[f, "bytes_per_row"] / 1000, val[u, "bytes_per_row"] / val[f, "bytes_per_row"], claim_run()
        printf "| <a id=\"c8\"></a>C8 | Because it moves 3× fewer bytes (C7), a fused softmax + top-K kernel is " \
            "2.5–3× faster than a softmax followed by a top-K | 8192 × 50257, K = 10: PyTorch's rows are not in " \
            "this run; against this course's unfused path (softmax, CUB sort, take K): fused %s and fast %s%s | " \
            "not tested against PyTorch in this run |\n", relative(f, "speedup"), relative(x, "speedup"), claim_run()
    } else {
        printf "| <a id=\"c7\"></a>C7 | A softmax written out and then read by a top-K moves 3× the bytes of a fused " \
            "kernel that reads the logits once | PyTorch's torch.topk(torch.softmax(x)) %.0f KB per row against " \
            "%.0f KB fused: %.1f×; this course's unfused path, which sorts whole rows, %.0f KB (%.1f×)%s " \
            "| confirmed; a full sort moves more still |\n", \
            val[t, "bytes_per_row"] / 1000, val[f, "bytes_per_row"] / 1000, \
            val[t, "bytes_per_row"] / val[f, "bytes_per_row"], \
            val[u, "bytes_per_row"] / 1000, val[u, "bytes_per_row"] / val[f, "bytes_per_row"], claim_run()
        ft = val[t, "median_ms"] / val[f, "median_ms"]
        printf "| <a id=\"c8\"></a>C8 | Because it moves 3× fewer bytes (C7), a fused softmax + top-K kernel is " \
            "2.5–3× faster than a softmax followed by a top-K | 8192 × 50257, K = 10, against PyTorch's " \
            "torch.topk(torch.softmax(x)) (%s ms): fused (a warp per row, K sorted candidates per lane) %.2f×, " \
            "fast %.1f×; against this course's unfused path (softmax, CUB sort, take K): %s and %s%s | %s |\n", \
            num(val[t, "median_ms"], "%.2f"), ft, val[t, "median_ms"] / val[x, "median_ms"], relative(f, "speedup"), \
            relative(x, "speedup"), claim_run(), \
            (ft >= 2.5 ? "confirmed; fast goes far past it" \
                       : sprintf("fused just short of it (%.2f×, where the bytes predict 3×); fast goes far past it", ft))
    }
    printf "| <a id=\"c9\"></a>C9 | A fused softmax + top-K kernel is 4× faster than the naive path (write the " \
        "softmax, sort it, take the first K) | fast %s over unfused at K = 10%s | confirmed and exceeded |\n", \
        relative(x, "speedup"), claim_run()
    printf "| <a id=\"c10\"></a>C10 | Fusing softmax and top-K gives up to 5× (a published result: Milakov & " \
        "Gimelshein, 2018) | %s (fused) to %s (fast) at K = 10%s | confirmed and exceeded, against a " \
        "sort-based baseline |\n", relative(f, "speedup"), relative(x, "speedup"), claim_run()
}

# The run's findings at 8192 × V (V = 50257, the workload's row length): the ratios, the goals'
# verdicts and a server's shapes from every run; the goals, the findings and the claims from the
# stage's lead run only.
function results(V) {
    ratios(V)
    set_goals()
    goal_verdicts()
    serving_goals()
    if (!lead) return
    goals_block(V)
    findings(V)
    claims(V)
    steps_block(V)
    libraries_block()
}

END {
    tables()
    results(50257)
    table_end()
}
