# The server's shapes, from plots/data/<gpu>/06_fused_topk_serving.csv (`./run --experiment serving`
# in 06_fused_topk/): fast beside the libraries' top-K at each shape, K, logits and order, and the
# decode loop from DRAM and from the L2. Its blocks land in 06_fused_topk/JOURNAL.md.

# The row of `experiment` for `variant` on row r's case: its rows, V, dtype, K and seed (0 if none).
function same_case(experiment, variant, r,    q) {
    for (q = 1; q <= nrows; q++)
        if (val[q, "experiment"] == experiment && val[q, "variant"] == variant && val[q, "rows"] == val[r, "rows"] && \
            val[q, "cols"] == val[r, "cols"] && val[q, "dtype"] == val[r, "dtype"] && val[q, "k"] == val[r, "k"] && \
            val[q, "seed"] == val[r, "seed"])
            return q
    return 0
}

# Row r's median in ms, four decimals under 0.1 ms; "—" for no row; a failed row says so.
function ms_cell(r) {
    if (!r) return "—"
    return num(val[r, "median_ms"], val[r, "median_ms"] < 0.1 ? "%.4f" : "%.3f") (val[r, "result"] == "PASS" ? "" : " (FAIL)")
}

# Row r's time a token in µs, one decimal.
function token_cell(r) {
    if (!r) return "—"
    return sprintf("%.2f", 1000 * val[r, "median_ms"] / val[r, "rows"]) (val[r, "result"] == "PASS" ? "" : " (FAIL)")
}

END {
    table_block("serving:06_fused_topk")
    print "| rows × V | dtype | K | logits | order | fast ms | % of read ceiling | check | fast_logits ms | cub_topk ms | flashinfer ms |"
    print "|---|---|---:|---|---|---:|---:|:---:|---:|---:|---:|"
    for (r = 1; r <= nrows; r++) {
        e = val[r, "experiment"]
        if ((e != "serving" && e != "serving_ascending") || val[r, "variant"] != "fast") continue
        printf "| %s × %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", \
            val[r, "rows"] == 1 ? "1" : count(val[r, "rows"]), val[r, "cols"], val[r, "dtype"], val[r, "k"], logits_cell(r), \
            e == "serving" ? "index" : "ascending", ms_cell(r), num(val[r, "pct_ceiling"], "%.1f"), val[r, "result"], \
            ms_cell(same_case(e, "fast_logits", r)), ms_cell(same_case(e, "cub_topk", r)), \
            ms_cell(same_case(e, "flashinfer", r))
    }
    table_block("serving_decode:06_fused_topk")
    print "| tokens × V | logits | logits from | fast µs a token | fast_no_pdl µs a token |"
    print "|---|---|---|---:|---:|"
    for (r = 1; r <= nrows; r++) {
        e = val[r, "experiment"]
        if ((e != "decode_loop" && e != "decode_loop_l2") || val[r, "variant"] != "fast") continue
        printf "| %s × %s | %s | %s | %s | %s |\n", val[r, "rows"], val[r, "cols"], logits_cell(r), \
            e == "decode_loop" ? "DRAM (a fresh row a token)" : "L2 (row 0 every token)", token_cell(r), \
            token_cell(same_case(e, "fast_no_pdl", r))
    }
    table_end()
}
