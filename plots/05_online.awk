# Tables, findings and claims for 05_online, from plots/data/<gpu>/05_online.csv.

END {
    setup_block("setup:05_online")
    table_block("table:05_rows_correctness")
    accuracy_table("rows_correctness", "rows × cols")
    table_block("table:05_1d")
    timing_table("timing", "speedup")
    table_block("table:05_rows")
    timing_table("rows", "speedup", "rows × cols")

    n = 100000000
    on = row_of("timing", "online", n); mp = row_of("timing", "multipass", n); cd = row_of("timing", "cudnn", n)
    fu = row_of("timing", "fused", n); fw = row_of("timing", "fused_warp", n)
    # cuDNN's rows are there when the build found cuDNN.
    ro = row_of("rows", "online_rows", 50257); rc = row_of("rows", "cudnn", 50257)
    ratio("findings:05_rows", "online's % of the copy ceiling at n = " count(n), num(val[on, "pct_ceiling"], "%.1f"))
    ratio("findings:05_rows", "online over multipass there", times(val[mp, "median_ms"] / val[on, "median_ms"]))
    ratio("findings:05_rows", "online_rows' % of the copy ceiling at " size_of(ro), num(val[ro, "pct_ceiling"], "%.1f"))
    if (rc) ratio("findings:05_rows", "online_rows over cuDNN there", times(val[rc, "median_ms"] / val[ro, "median_ms"]))

    # The findings and the claim: from the stage's lead run only.
    if (!lead) exit

    block("findings:05_1d")
    printf "- At n = %s, online takes %s ms: %s %% of the copy ceiling counting 8 bytes per element, %.1f %% counting the %s it moves (x read twice, y written once).\n", \
        count(n), num(val[on, "median_ms"], "%.3f"), num(val[on, "pct_ceiling"], "%.1f"), val[on, "pct_ceiling"] * val[on, "bytes_per_elem"] / 8, val[on, "bytes_per_elem"]
    printf "- Bytes per element side by side: multipass %s, fused %s, fused_warp %s, online %s. At n = %s their times are %s, %s, %s and %s ms: online is %.1f× faster than multipass, where the bytes alone would give %.2f×.\n", \
        val[mp, "bytes_per_elem"], val[fu, "bytes_per_elem"], val[fw, "bytes_per_elem"], val[on, "bytes_per_elem"], count(n), \
        num(val[mp, "median_ms"], "%.3f"), num(val[fu, "median_ms"], "%.3f"), num(val[fw, "median_ms"], "%.3f"), num(val[on, "median_ms"], "%.3f"), \
        val[mp, "median_ms"] / val[on, "median_ms"], val[mp, "bytes_per_elem"] / val[on, "bytes_per_elem"]
    printf "- cuDNN computes one softmax over n in %s ms (online is %s faster): it is not built for one long row. Its output %s the check there (max relative error %s against the 1e-4 tolerance).\n", \
        num(val[cd, "median_ms"], "%.1f"), relative(on, "speedup"), val[cd, "result"] == "PASS" ? "passes" : "fails", num(val[cd, "max_rel_err"], "%.1e")
    printf "- Measured over the time each variant's own bytes take at the copy ceiling, at n = %s: %s. online by size: %s.\n", \
        count(n), model_at("timing", n), model_by_size("timing", "online")

    # Arithmetic intensity of online, FLOP per element counted from the recurrence as online.cu
    # writes it: the statistic m' = max(m, x), d' = d * exp(m - m') + exp(x - m') is a max, two
    # subtractions, two exps, a multiply and an add (7); the normalize y = exp(x - m) / d a
    # subtraction, an exp and a multiply by 1/d (3). With each exp counted as one: 10. __expf does
    # two operations, a multiply by log2 e and then the SFU's ex2 (its other three instructions only
    # handle results too small for ex2 alone, GLOSSARY.md); counting each of the three exps so: 13.
    # (The kernel rescales d once per four elements, so it does a little less.)
    flop = 10; exps = 3
    block("intensity:05_online")
    printf "- online: %d FLOP per element with each exp counted as one, %d with each exp counted as the two operations of `__expf` (a multiply by log2 e, the SFU's ex2; its other three instructions handle results too small for ex2 alone); over the %s bytes per element it moves, %.2f and %.2f FLOP per byte.\n", \
        flop, flop + exps, val[on, "bytes_per_elem"], flop / val[on, "bytes_per_elem"], (flop + exps) / val[on, "bytes_per_elem"]

    block("findings:05_rows")
    m = split(rows_where("experiment", "rows"), rw, " ")
    for (i = 1; i <= m; i++) {
        r = rw[i]
        if (val[r, "variant"] != "online_rows") continue
        c = row_of("rows", "cudnn", val[r, "cols"])
        printf "- %s × %s: online_rows %s ms (%s %% of the copy ceiling), cuDNN %s ms (%s %%): %.2f of cuDNN's time.\n", \
            count(val[r, "rows"]), count(val[r, "cols"]), num(val[r, "median_ms"], "%.4f"), num(val[r, "pct_ceiling"], "%.1f"), \
            num(val[c, "median_ms"], "%.4f"), num(val[c, "pct_ceiling"], "%.1f"), val[r, "median_ms"] / val[c, "median_ms"]
    }
    printf "- Measured over the time each variant's own bytes take at the copy ceiling: online_rows %s; cuDNN %s; block_per_row %s. Faster than its bytes predict: %s.\n", \
        model_range("rows", "online_rows"), model_range("rows", "cudnn"), model_range("rows", "block_per_row"), below_model("rows")

    block("claims")
    printf "| <a id=\"c6\"></a>C6 | The multi-pass softmax with shared-memory reductions and its warp-shuffle version move 16 bytes per element, the online softmax 12: online moves 25 %% less | bytes by construction here: multipass %s, online %s (%.0f %% less than multipass), online_rows %s (a row cached on chip); no warp-shuffle multipass is built here: fused_warp (%s) is stage 03's fused (%s) with shuffles, another algorithm (block statistics, a merge, a normalize); time at n = %s: online %.1f× faster than multipass%s | %s; the warp-shuffle multipass is not built here |\n", \
        val[mp, "bytes_per_elem"], val[on, "bytes_per_elem"], 100 * (1 - val[on, "bytes_per_elem"] / val[mp, "bytes_per_elem"]), \
        val[ro, "bytes_per_elem"], val[fw, "bytes_per_elem"], val[fu, "bytes_per_elem"], count(n), val[mp, "median_ms"] / val[on, "median_ms"], claim_run(), \
        (val[mp, "bytes_per_elem"] == 16 && val[on, "bytes_per_elem"] == 12 ? "" : "not reproduced: ") "multipass " val[mp, "bytes_per_elem"] " and online " val[on, "bytes_per_elem"] \
        (val[mp, "bytes_per_elem"] == 16 && val[on, "bytes_per_elem"] == 12 ? " confirmed" : "")
}
