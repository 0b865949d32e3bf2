# Tables, findings and claims for 06_fused_topk, from plots/data/<gpu>/06_fused_topk.csv.

# The rows of an experiment with this variant and dtype, as a list "r1 r2 ..." for split().
function topk_rows(experiment, variant, dtype,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++)
        if (val[r, "experiment"] == experiment && val[r, "variant"] == variant && val[r, "dtype"] == dtype) out = out " " r
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
function topk_table(experiment,    m, t, i, r, d) {
    print "| rows × V | dtype | K | variant | median ms | predicted ms | measured / predicted | GB/s | % of read ceiling | KB moved per row | check | speedup over unfused |"
    print "|---|---|---:|---|---:|---:|---:|---:|---:|---:|:---:|---:|"
    m = split(rows_where("experiment", experiment), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        d = (val[r, "median_ms"] < 0.1) ? 4 : 3
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s |\n", \
            (val[r, "rows"] == 1 ? "1" : count(val[r, "rows"])) " × " val[r, "cols"], val[r, "dtype"], val[r, "k"], val[r, "variant"], \
            num(val[r, "median_ms"], "%." d "f"), model_cells(r, d), num(val[r, "gbps"], "%.0f"), num(val[r, "pct_ceiling"], "%.1f"), \
            val[r, "bytes_per_row"] / 1000, val[r, "result"], relative(r, "speedup")
    }
}

# The stage's goals, each the row it judges and a share of the read ceiling (pct) or a time in ms:
# goal_what[i], goal_row[i], goal_pct[i], goal_ms[i] for i = 1 .. ngoals.
function set_goals(V,    i) {
    ngoals = 0
    add_goal("8192 × 50257 float32, K = 10, fast", topk_row("workload", "fast", "float32", V, 10), 90, 0)
    add_goal("8192 × 50257 float32, K = 50, fast", topk_row("workload", "fast", "float32", V, 50), 90, 0)
    add_goal("8192 × 50257 bf16, K = 10, fast", topk_row("dtype", "fast", "bf16", V, 10), 85, 0)
    add_goal("8192 × 50257 bf16, K = 50, fast", topk_row("dtype", "fast", "bf16", V, 50), 85, 0)
    add_goal("8192 × 50257 float32, K = 256, fast", topk_row("k_sweep", "fast", "float32", V, 256), 70, 0)
    split("50257 128256 262144", vocab, " ")
    for (i = 1; i <= 3; i++)
        add_goal("batch 1, V = " vocab[i] ", K = 50, fast", topk_row("batch1", "fast", "float32", vocab[i], 50), 0, 0.008)
}
function add_goal(what, r, pct, ms_goal) {
    ngoals++; goal_what[ngoals] = what; goal_row[ngoals] = r; goal_pct[ngoals] = pct; goal_ms[ngoals] = ms_goal
}
function goal_met(i,    r) {
    r = goal_row[i]
    return goal_pct[i] ? ceiling_met(r, goal_pct[i]) : val[r, "median_ms"] <= goal_ms[i]
}
# Whether row r reaches pct % of the read ceiling.
function ceiling_met(r, pct) { return val[r, "pct_ceiling"] >= pct }
# What goal i judges, as measured: "72.5 % of the read ceiling", "9.2 µs".
function goal_measured(i,    r) {
    r = goal_row[i]
    return goal_pct[i] ? num(val[r, "pct_ceiling"], "%.1f") " % of the read ceiling" : sprintf("%.1f µs", 1000 * val[r, "median_ms"])
}

# Goal i against the measurement, as a line of the goals block: "met" or "NOT met".
function goal(i,    r) {
    r = goal_row[i]
    printf "- %s: %s ms, %s %% of the read ceiling, %s over unfused. Goal %s: **%s**.\n", goal_what[i], \
        num(val[r, "median_ms"], "%.4f"), num(val[r, "pct_ceiling"], "%.1f"), relative(r, "speedup"), \
        goal_pct[i] ? "≥ " goal_pct[i] " % of the ceiling" : "≤ " goal_ms[i] * 1000 " µs", goal_met(i) ? "met" : "NOT met"
}

# Every run's verdict on each goal, for plots/gather.awk: where another GPU's run meets a goal that
# the lead run misses, or misses one it meets, the goals block ends with a line that says so.
function goal_verdicts(    i) {
    block("goals")
    for (i = 1; i <= ngoals; i++)
        printf "findings:06_goals\t%s\t%s\t%s\t%s\n", gpu_name(meta["gpu"]), goal_what[i], goal_met(i) ? "met" : "NOT met", goal_measured(i)
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
        printf "- torch.topk(torch.softmax(x), k), float32, K = 1 to 1024: %s ms, %s× faster than unfused; fast is %.1f× faster than it at K = 10.%s\n", \
            measure_span("k_sweep", "torch", "float32", "median_ms", 1, "%.1f"), measure_span("k_sweep", "torch", "float32", "speedup", 1, "%.1f"), \
            val[r, "median_ms"] / val[topk_row("k_sweep", "fast", "float32", V, 10), "median_ms"], failed == "" ? "" : " Its check fails at K = " failed "."
    }
    line = ""
    m = split(topk_rows("k_sweep", "fast", "float32"), t, " ")
    for (i = 1; i <= m; i++)
        line = line (line == "" ? "" : ", ") "K = " val[t[i], "k"] " " num(val[t[i], "pct_ceiling"], "%.1f") " %"
    printf "- fast, float32, against the read ceiling: %s.\n", line
    b16 = topk_row("dtype", "fast", "bf16", V, 10); f32 = topk_row("workload", "fast", "float32", V, 10)
    printf "- 16-bit logits, fast: bf16 K = 10 %s %% of the ceiling, %.2f× faster than float32 K = 10 for half the bytes; bf16 K = 50 %s %%; fp16 K = 10 %s %%, K = 50 %s %%.\n", \
        num(val[b16, "pct_ceiling"], "%.1f"), val[f32, "median_ms"] / val[b16, "median_ms"], \
        num(val[topk_row("dtype", "fast", "bf16", V, 50), "pct_ceiling"], "%.1f"), \
        num(val[topk_row("dtype", "fast", "fp16", V, 10), "pct_ceiling"], "%.1f"), num(val[topk_row("dtype", "fast", "fp16", V, 50), "pct_ceiling"], "%.1f")
    split_us = measure_span("batch1", "fast_split", "float32", "median_ms", 1000, "%.1f") # none where clusters are not
    torch_ms = measure_span("batch1", "torch", "float32", "median_ms", 1, "%.2f")
    printf "- A batch of one, K = 50, V = 50257 to 262144: fast %s µs%s, fast_row (one warp for the row) %s ms, unfused %s ms%s.\n", \
        measure_span("batch1", "fast", "float32", "median_ms", 1000, "%.1f"), split_us == "" ? "" : " (fast_split " split_us " µs)", \
        measure_span("batch1", "fast_row", "float32", "median_ms", 1, "%.2f"), measure_span("batch1", "unfused", "float32", "median_ms", 1, "%.2f"), \
        torch_ms == "" ? "" : ", torch " torch_ms " ms"
    x = topk_row("k_sweep", "fast", "float32", V, 10)
    printf "- Measured over the time the bytes each row moves take at the read ceiling, float32, %s × %s: fast %s; fused %s; unfused %s×%s. 16-bit logits, fast: bf16 %s; fp16 %s. A batch of one, K = 50: fast %s.\n", \
        count(val[x, "rows"]), V, model_along("k_sweep", "fast", "float32", "k", "K"), model_along("k_sweep", "fused", "float32", "k", "K"), \
        measure_span("k_sweep", "unfused", "float32", "model", 1, "%.2f"), \
        r ? ", torch " measure_span("k_sweep", "torch", "float32", "model", 1, "%.2f") "×" : "", \
        model_along("dtype", "fast", "bf16", "k", "K"), model_along("dtype", "fast", "fp16", "k", "K"), model_along("batch1", "fast", "float32", "cols", "V")
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
    print "| V | dtype | K | variant | tokens | replay median ms | µs a token | GB/s | % of read ceiling | check | speedup |"
    print "|---:|---|---:|---|---:|---:|---:|---:|---:|:---:|---:|"
    m = split(rows_where("experiment", "decode_loop"), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        printf "| %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s |\n", val[r, "cols"], val[r, "dtype"], val[r, "k"], \
            val[r, "variant"], val[r, "rows"], num(val[r, "median_ms"], "%.3f"), 1000 * val[r, "median_ms"] / val[r, "rows"], \
            num(val[r, "gbps"], "%.0f"), num(val[r, "pct_ceiling"], "%.1f"), val[r, "result"], relative(r, "speedup")
    }
}

# The issue's goals for a server's shapes, as measured, or "no rows yet".
function serving_goals(    j, n, t, r, line, low, lowest, slower, d, sizes, prev, vv) {
    block("findings:06_serving")
    if (!lead) print ""
    print "**" gpu_name(meta["gpu"]) "**:"
    print ""
    # From 256 rows up at V = 128256, fast at >= 80 % of the read ceiling.
    line = ""; low = 0
    split("float32 bf16", d, " ")
    for (j = 1; j <= 2; j++) {
        n = split(topk_rows("batch_sweep", "fast", d[j]), t, " ")
        for (i = 1; i <= n; i++) {
            r = t[i]
            if (val[r, "cols"] != 128256 || val[r, "rows"] < 256) continue
            line = line (line == "" ? "" : ", ") d[j] " " val[r, "rows"] " rows " num(val[r, "pct_ceiling"], "%.1f") " %"
            if (val[r, "pct_ceiling"] < 80) low++
        }
    }
    if (line == "") print "- Batches from 256 rows up at V = 128256, fast: no rows yet. Goal ≥ 80 % of the read ceiling."
    else printf "- Batches from 256 rows up at V = 128256, fast: %s. Goal ≥ 80 %% of the read ceiling: **%s**.\n", line, low ? "NOT met" : "met"
    # Never slower than at a larger batch: each (V, dtype)'s times in the order of the rows. A pair that
    # fails also shows the larger batch's fastest and slowest timed runs, so that the reader can see
    # whether the medians' order is outside their run-to-run spread.
    slower = ""
    n = split(rows_where("experiment", "batch_sweep"), t, " ")
    for (i = 1; i <= n; i++) {
        r = t[i]
        if (val[r, "variant"] != "fast") continue
        for (j = 1; j <= n; j++) {
            q = t[j]
            if (val[q, "variant"] == "fast" && val[q, "cols"] == val[r, "cols"] && val[q, "dtype"] == val[r, "dtype"] && \
                val[q, "rows"] + 0 > val[r, "rows"] + 0 && val[q, "median_ms"] + 0 < val[r, "median_ms"] + 0) {
                slower = slower (slower == "" ? "" : "; ") val[r, "rows"] " × " val[r, "cols"] " " val[r, "dtype"] " (" \
                    sprintf("%.1f", 1000 * val[r, "median_ms"]) " µs) slower than " val[q, "rows"] " rows (" sprintf("%.1f", 1000 * val[q, "median_ms"]) " µs, its runs " \
                    sprintf("%.1f", 1000 * val[q, "min_ms"]) "–" sprintf("%.1f", 1000 * val[q, "max_ms"]) ")"
                break
            }
        }
    }
    if (n == 0) print "- Never slower than at a larger batch: no rows yet."
    else printf "- Never slower than at a larger batch: **%s**%s.\n", slower == "" ? "met" : "NOT met", slower == "" ? "" : ": " slower
    # The decode loop at V = 128256: <= 4 µs a token.
    split("fast fast_no_pdl torch", vv, " ")
    line = ""
    for (j = 1; j <= 3; j++) {
        n = split(topk_rows("decode_loop", vv[j], "float32"), t, " ")
        for (i = 1; i <= n; i++)
            if (val[t[i], "cols"] == 128256) {
                line = line (line == "" ? "" : ", ") vv[j] " " sprintf("%.2f", 1000 * val[t[i], "median_ms"] / val[t[i], "rows"]) " µs"
                if (vv[j] == "fast") met = 1000 * val[t[i], "median_ms"] / val[t[i], "rows"] <= 4
            }
    }
    if (line == "") print "- The decode loop at V = 128256, K = 50, time a token: no rows yet. Goal ≤ 4 µs."
    else printf "- The decode loop at V = 128256, K = 50, time a token: %s. Goal ≤ 4 µs (fast): **%s**.\n", line, met ? "met" : "NOT met"
    # Large K, and 16-bit logits at K = 50, at 8192 x 50257: shares of the read ceiling.
    printf "- 8192 × 50257 float32, fast: K = 256 %s, K = 1024 %s.\n", \
        ceiling_goal(topk_row("k_sweep", "fast", "float32", 50257, 256), 85), ceiling_goal(topk_row("k_sweep", "fast", "float32", 50257, 1024), 60)
    printf "- 8192 × 50257, K = 50, fast: bf16 %s, fp16 %s.\n", \
        ceiling_goal(topk_row("dtype", "fast", "bf16", 50257, 50), 85), ceiling_goal(topk_row("dtype", "fast", "fp16", 50257, 50), 85)
}

# Row r's share of the read ceiling against a goal of `pct` %: "87.8 % (goal ≥ 85 %: **met**)".
function ceiling_goal(r, pct) {
    if (!r) return "no row (goal ≥ " pct " %)"
    return num(val[r, "pct_ceiling"], "%.1f") " % (goal ≥ " pct " %: **" (ceiling_met(r, pct) ? "met" : "NOT met") "**)"
}

END {
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
    table_block("table:06_decode_loop")
    if (!no_rows_yet("decode_loop")) decode_table()
    table_block("table:06_sample")
    if (!no_rows_yet("sample")) topk_table("sample")

    V = 50257
    u = topk_row("workload", "unfused", "float32", V, 10); f = topk_row("workload", "fused", "float32", V, 10)
    x = topk_row("workload", "fast", "float32", V, 10); t = topk_row("workload", "torch", "float32", V, 10)
    b16 = topk_row("dtype", "fast", "bf16", V, 10)
    ratio("findings:06_fused_topk", "fast's % of the read ceiling, float32, K = 10", num(val[x, "pct_ceiling"], "%.1f"))
    ratio("findings:06_fused_topk", "bf16, K = 10", num(val[b16, "pct_ceiling"], "%.1f"))
    ratio("findings:06_fused_topk", "fused's % of the read ceiling, float32, K = 10", num(val[f, "pct_ceiling"], "%.1f"))
    ratio("findings:06_fused_topk", "fast over unfused, K = 10", relative(x, "speedup"))
    # PyTorch's rows are there when torch_topk.py added them.
    if (t) ratio("findings:06_fused_topk", "fast over torch, K = 10", times(val[t, "median_ms"] / val[x, "median_ms"]))
    if (t) ratio("findings:06_fused_topk", "fused over torch, K = 10", times(val[t, "median_ms"] / val[f, "median_ms"]))

    set_goals(V)
    goal_verdicts()
    serving_goals()

    # The goals, the findings and the claims: from the stage's lead run only.
    if (!lead) exit

    block("findings:06_goals")
    for (i = 1; i <= 5; i++) goal(i)
    r = topk_row("k_sweep", "fast", "float32", V, 1024)
    printf "- 8192 × 50257 float32, K = 1024, fast (to report): %s ms, %s %% of the read ceiling, %s over unfused.\n", \
        num(val[r, "median_ms"], "%.3f"), num(val[r, "pct_ceiling"], "%.1f"), relative(r, "speedup")
    # PyTorch's rows, where torch_topk.py added them to the CSV.
    for (i = 1; i <= 2; i++) {
        kk = i == 1 ? 10 : 50
        pt = topk_row("workload", "torch", "float32", V, kk); px = topk_row("workload", "fast", "float32", V, kk)
        if (pt && px)
            printf "- 8192 × 50257 float32, K = %d, torch.topk(torch.softmax(x)) (to report): %s ms; fast is %.1f× faster.\n", \
                kk, num(val[pt, "median_ms"], "%.3f"), val[pt, "median_ms"] / val[px, "median_ms"]
    }
    for (i = 6; i <= ngoals; i++) goal(i)

    findings(V)

    block("claims")
    printf "| <a id=\"c7\"></a>C7 | A softmax written out and then read by a top-K moves 3× the bytes of a fused kernel that reads the logits once | PyTorch's torch.topk(torch.softmax(x)) %.0f KB per row against %.0f KB fused: %.1f×; this course's unfused path, which sorts whole rows, %.0f KB (%.1f×)%s | confirmed; a full sort moves more still |\n", \
        val[t, "bytes_per_row"] / 1000, val[f, "bytes_per_row"] / 1000, val[t, "bytes_per_row"] / val[f, "bytes_per_row"], \
        val[u, "bytes_per_row"] / 1000, val[u, "bytes_per_row"] / val[f, "bytes_per_row"], claim_run()
    ft = val[t, "median_ms"] / val[f, "median_ms"]
    printf "| <a id=\"c8\"></a>C8 | Because it moves 3× fewer bytes (C7), a fused softmax + top-K kernel is 2.5–3× faster than a softmax followed by a top-K | 8192 × 50257, K = 10, against PyTorch's torch.topk(torch.softmax(x)) (%s ms): fused (a warp per row, K sorted candidates per lane) %.2f×, fast %.1f×; against this course's unfused path (softmax, CUB sort, take K): %s and %s%s | %s |\n", \
        num(val[t, "median_ms"], "%.2f"), ft, val[t, "median_ms"] / val[x, "median_ms"], relative(f, "speedup"), relative(x, "speedup"), claim_run(), \
        (ft >= 2.5 ? "confirmed; fast goes far past it" : sprintf("fused just short of it (%.2f×, where the bytes predict 3×); fast goes far past it", ft))
    printf "| <a id=\"c9\"></a>C9 | A fused softmax + top-K kernel is 4× faster than the naive path (write the softmax, sort it, take the first K) | fast %s over unfused at K = 10%s | confirmed and exceeded |\n", relative(x, "speedup"), claim_run()
    printf "| <a id=\"c10\"></a>C10 | Fusing softmax and top-K gives up to 5× (a published result: Milakov & Gimelshein, 2018) | %s (fused) to %s (fast) at K = 10%s | confirmed and exceeded, against a sort-based baseline |\n", \
        relative(f, "speedup"), relative(x, "speedup"), claim_run()
}
