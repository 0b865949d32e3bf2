# Tables, findings and claims for 04_warp, from plots/data/<gpu>/04_warp.csv.

END {
    setup_block("setup:04_warp")
    table_block("table:04_rows_correctness")
    accuracy_table("rows_correctness", "rows × cols")
    table_block("table:04_reduction")
    timing_table("timing", "speedup")
    table_block("table:04_rows_sweep")
    timing_table("rows_sweep", "speedup", "cols")

    m = split(rows_where("experiment", "timing"), tm, " ")
    line = ""
    for (i = 1; i <= m; i++) {
        r = tm[i]
        if (val[r, "variant"] != "fused_warp") continue
        line = line (line == "" ? "" : ", ") relative(r, "speedup") " at n = " count(val[r, "cols"])
        last = r
    }
    ratio("findings:04_rows", "fused_warp over fused at n = " count(val[last, "cols"]), relative(last, "speedup"))
    w = row_of("rows_sweep", "warp_per_row", 256); b = row_of("rows_sweep", "block_per_row", 4096)
    ratio("findings:04_rows", "warp_per_row's % of the copy ceiling at " size_of(w), num(val[w, "pct_ceiling"], "%.1f"))
    ratio("findings:04_rows", "block_per_row's measured / predicted at " size_of(b), times(model_ratio(b)))

    # The findings and the claim: from the stage's lead run only.
    if (!lead) exit

    block("findings:04_reduction")
    printf "- fused_warp against fused (same kernels, same bytes, shuffles instead of the shared-memory tree): %s. At n = %s it reaches %s %% of the copy ceiling against fused's %s %%.\n", \
        line, count(val[last, "cols"]), num(val[last, "pct_ceiling"], "%.1f"), num(val[row_of("timing", "fused", val[last, "cols"]), "pct_ceiling"], "%.1f")
    printf "- Measured over the time their %s bytes per element take at the copy ceiling: fused %s; fused_warp %s.\n", \
        val[last, "bytes_per_elem"], model_by_size("timing", "fused"), model_by_size("timing", "fused_warp")

    block("findings:04_rows")
    m = split(rows_where("experiment", "rows_sweep"), sw, " ")
    # The fastest variant at each row length, and the runs of lengths where the same one wins.
    for (i = 1; i <= m; i++) {
        r = sw[i]; c = val[r, "cols"]
        if (!(c in best) || val[r, "median_ms"] < val[best[c], "median_ms"]) best[c] = r
        if (!(c in seen)) { seen[c] = 1; lengths[++n_lengths] = c }
    }
    for (k = 1; k <= n_lengths; k++) {
        r = best[lengths[k]]
        printf "- %s × %s: fastest is %s, %s ms, %s %% of the copy ceiling (%s over thread_per_row).\n", \
            count(val[r, "rows"]), count(val[r, "cols"]), val[r, "variant"], num(val[r, "median_ms"], "%.4f"), \
            num(val[r, "pct_ceiling"], "%.1f"), relative(r, "speedup")
    }
    printf "- Measured over the time each variant's own bytes take at the copy ceiling: warp_per_row (%s bytes per element) %s; thread_per_row (%s) %s; block_per_row (%s) %s. Faster than its bytes predict: %s.\n", \
        val[row_of("rows_sweep", "warp_per_row", lengths[1]), "bytes_per_elem"], model_range("rows_sweep", "warp_per_row"), \
        val[row_of("rows_sweep", "thread_per_row", lengths[1]), "bytes_per_elem"], model_range("rows_sweep", "thread_per_row"), \
        val[row_of("rows_sweep", "block_per_row", lengths[1]), "bytes_per_elem"], model_range("rows_sweep", "block_per_row"), \
        below_model("rows_sweep")

    block("claims")
    r = last
    printf "| <a id=\"c5\"></a>C5 | Warp-shuffle reductions are faster than a shared-memory tree for the same algorithm, without moving fewer bytes | fused_warp vs fused: %s at n = %s, both %s bytes/elem%s | %s |\n", \
        relative(r, "speedup"), count(val[r, "cols"]), val[r, "bytes_per_elem"], claim_run(), (val[r, "baseline_ms"] > val[r, "median_ms"]) ? "confirmed" : "not reproduced"
}
