# Tables, findings and claims for 02_multipass, from plots/data/<gpu>/02_multipass.csv.

END {
    setup_block("setup:02_multipass")
    table_block("table:02_stability")
    accuracy_table("stability")
    table_block("table:02_timing")
    timing_table("timing", "overhead")

    split(rows_where("experiment", "timing"), tm, " ")
    first_n = val[tm[1], "cols"]; last_n = val[tm[length(tm)], "cols"]
    small = row_of("timing", "multipass", first_n); big = row_of("timing", "multipass", last_n)
    nbig = row_of("timing", "naive", last_n)
    ratio("findings:02_multipass", "multipass's overhead over naive at n = " count(first_n), relative(small, "overhead"))
    ratio("findings:02_multipass", "at n = " count(last_n), relative(big, "overhead"))
    ratio("findings:02_multipass", "multipass's % of the copy ceiling at n = " count(last_n), num(val[big, "pct_ceiling"], "%.1f"))

    # The findings and the claims: from the stage's lead run only.
    if (!lead) exit

    block("findings:02_multipass")
    m = split(rows_where("experiment", "stability"), st, " ")
    passed = failed = ""
    for (i = 1; i <= m; i++) {
        r = st[i]
        range = "[" val[r, "lo"] ", " val[r, "hi"] "]"
        if (val[r, "variant"] == "multipass" && val[r, "result"] == "PASS")
            passed = passed (passed == "" ? "" : ", ") range
        if (val[r, "variant"] == "naive" && val[r, "result"] == "FAIL")
            failed = failed (failed == "" ? "" : ", ") range " (" val[r, "nonfinite"] " NaN)"
        if (val[r, "lo"] == 500) stable500[val[r, "variant"]] = val[r, "result"]
    }
    printf "- multipass passes on %s; naive fails on %s.\n", passed, failed
    printf "- At n = %s multipass takes %s ms against naive's %s ms: %s. The byte counts alone (16 against 12 per element) predict +33 %%. It makes %s launches at n = %s and %s at %s: two per reduction level (one for the max, one for the sum) plus the normalize.\n", \
        count(last_n), num(val[big, "median_ms"], "%.3f"), num(val[nbig, "median_ms"], "%.3f"), relative(big, "overhead"), \
        val[small, "launches"], count(first_n), val[big, "launches"], count(last_n)
    printf "- multipass reaches %s %% of the copy ceiling at n = %s; counting the 16 bytes per element it moves, %.1f %%. It is not the bytes that cost: see the stage's README.\n", \
        num(val[big, "pct_ceiling"], "%.1f"), count(last_n), val[big, "pct_ceiling"] * 2
    printf "- Measured over the time each variant's own bytes take at the copy ceiling: %s at n = %s; %s at n = %s.\n", \
        model_at("timing", last_n), count(last_n), model_at("timing", first_n), count(first_n)

    block("claims")
    printf "| <a id=\"c2\"></a>C2 | Subtracting the max before exp makes softmax stable: correct on [500, 1000], where the naive one overflows | multipass: %s%s | %s |\n", \
        passed, claim_run(), (stable500["multipass"] == "PASS" && stable500["naive"] == "FAIL") ? "confirmed" : "not reproduced"
    printf "| <a id=\"c3\"></a>C3 | Stability costs time: the multi-pass softmax (a pass for the max, one for the sum, one to normalize) is slower than the naive one | %s at n = %s, %s at %s%s | %s |\n", \
        relative(small, "overhead"), count(first_n), relative(big, "overhead"), count(last_n), claim_run(), \
        (val[big, "median_ms"] > val[nbig, "median_ms"]) ? "confirmed" : "not reproduced"
}
