# Tables, findings and claims for 01_naive, from plots/data/<gpu>/01_naive.csv.
# Run by plots/make_plots.sh after plots/common.awk and plots/lib.awk, once for each GPU.

END {
    setup_block("setup:01_naive")

    table_block("table:01_overflow")
    accuracy_table("overflow")
    split(rows_where("experiment", "overflow"), ov, " ")

    table_block("table:01_overflow_sweep")
    print "| inputs | sum of outputs | NaN/Inf outputs | check |"
    print "|---|---:|---:|:---:|"
    m = split(rows_where("experiment", "overflow_sweep"), sw, " ")
    last_pass = silent = first_nan = all_nan = ""
    for (i = 1; i <= m; i++) {
        r = sw[i]
        h = val[r, "hi"]
        print "| uniform [" val[r, "lo"] ", " h "] | " num(val[r, "row_sum"], "%.6g") " | " val[r, "nonfinite"] " / " val[r, "cols"] " | " val[r, "result"] " |"
        if (val[r, "result"] == "PASS") last_pass = h
        if (silent == "" && val[r, "row_sum"] == 0 && val[r, "nonfinite"] == 0) silent = h
        if (first_nan == "" && val[r, "nonfinite"] > 0) first_nan = h
        if (all_nan == "" && val[r, "nonfinite"] == val[r, "cols"]) all_nan = h
    }

    table_block("table:01_timing")
    timing_table("timing", "")
    m = split(rows_where("experiment", "timing"), tm, " ")
    big = tm[m]
    small = tm[1]
    ratio("findings:01_timing", "naive's % of the copy ceiling at n = " count(val[big, "cols"]), num(val[big, "pct_ceiling"], "%.1f"))
    ratio("findings:01_timing", "its measured / predicted there", times(model_ratio(big)))

    # The findings and the claim: from the stage's lead run only.
    if (!lead) exit

    block("findings:01_overflow")
    safe = ov[1]; huge = ov[2]
    printf "- On uniform [%s, %s] the naive kernel %s (max relative error %s). On uniform [%s, %s], %s of %s outputs are NaN or Inf and their sum is %s.\n", \
        val[safe, "lo"], val[safe, "hi"], val[safe, "result"] == "PASS" ? "passes" : "FAILS", num(val[safe, "max_rel_err"], "%.1e"), \
        val[huge, "lo"], val[huge, "hi"], val[huge, "nonfinite"], val[huge, "cols"], val[huge, "row_sum"]
    printf "- With inputs in [h−10, h], the last h that passes is %s. From h = %s every output is 0 and none is NaN: the *sum* overflowed while each exp did not, a wrong answer that nothing flags. From h = %s some outputs are NaN (their own exp overflowed), and from h = %s all of them.\n", \
        last_pass, silent, first_nan, all_nan

    block("findings:01_timing")
    printf "- At n = %s the kernel takes %s ms: %s GB/s counting the 8 bytes per element any softmax must move, %s %% of the copy ceiling. Counting the %s bytes it actually moves (x is read twice), that is %.0f GB/s, %.1f %% of the ceiling.\n", \
        count(val[big, "cols"]), num(val[big, "median_ms"], "%.3f"), num(val[big, "gbps"], "%.0f"), num(val[big, "pct_ceiling"], "%.1f"), \
        val[big, "bytes_per_elem"], val[big, "gbps"] * val[big, "bytes_per_elem"] / 8, val[big, "pct_ceiling"] * val[big, "bytes_per_elem"] / 8
    flat = small
    for (i = 2; i <= m; i++) if (val[tm[i], "median_ms"] <= 1.25 * val[small, "median_ms"]) flat = tm[i]
    printf "- From n = %s to %s the time stays within 25 %% of %s ms: there two kernel launches and a memset, not memory, set the time.\n", \
        count(val[small, "cols"]), count(val[flat, "cols"]), num(val[small, "median_ms"], "%.4f")
    printf "- Measured over the time its %s bytes per element take at the copy ceiling: %s.\n", \
        val[big, "bytes_per_elem"], model_by_size("timing", "naive")

    block("claims")
    printf "| <a id=\"c1\"></a>C1 | Softmax computed as exp(x) / Σ exp(x), without subtracting the max, overflows on inputs in [500, 1000] | %s of %s outputs NaN/Inf, sum %s%s | %s |\n", \
        val[huge, "nonfinite"], val[huge, "cols"], val[huge, "row_sum"], claim_run(), val[huge, "nonfinite"] == val[huge, "cols"] ? "confirmed" : "not reproduced"
}
