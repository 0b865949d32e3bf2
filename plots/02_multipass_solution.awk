# The measured answer of stage 02's exercise, for 02_multipass/solution/README.md, from
# plots/data/<gpu>/02_multipass_solution.csv (./run_solution --variant exercise, the worked fold):
# each size from 1M up that it timed, beside multipass's row of the same size in
# plots/data/<gpu>/02_multipass.csv, the stage's run in the same GPU folder. Each % of the ceiling
# is against the ceiling that its own run measured.

# Row fields of multipass's timing rows in the stage's CSV, as base[n, "column"].
function read_stage_run(path,    line, f, head, nhead, i, n, c, have) {
    nhead = 0
    while ((getline line < path) > 0) {
        if (substr(line, 1, 2) == "# ") {
            if (substr(line, 3, 6) == "date: ") base_date = substr(line, 9)
            if (substr(line, 3, 6) == "code: ") base_code = substr(line, 9)
            if (substr(line, 3, 9) == "sources: ") base_sources = substr(line, 12)
            continue
        }
        n = split(line, f, ",")
        if (nhead == 0) { for (i = 1; i <= n; i++) head[f[i]] = i; nhead = n; continue }
        if (f[head["experiment"]] != "timing" || f[head["variant"]] != "multipass") continue
        for (c in head) base[f[head["cols"]], c] = f[head[c]]
        base[f[head["cols"]], "pct_ceiling"] = pct_ceiling(f[head["gbps"]], f[head["ceiling_gbps"]], f[head["pct_ceiling"]])
        have = 1
    }
    close(path)
    return have
}

END {
    if (!lead) exit
    stage_csv = FILENAME
    sub(/_solution\.csv$/, ".csv", stage_csv)
    base_name = run_name(stage_csv)
    if (!read_stage_run(stage_csv)) {
        printf "%s: no multipass timing rows in %s to compare with\n", FILENAME, stage_csv > "/dev/stderr"
        exit 1
    }

    block("solution:02_multipass")
    print "| n | multipass ms | % of ceiling | the fold's ms | % of ceiling | speedup | launches | check |"
    print "|---:|---:|---:|---:|---:|---:|---|:---:|"
    m = split(rows_where("experiment", "timing"), t, " ")
    shown = 0
    for (i = 1; i <= m; i++) {
        r = t[i]
        n = val[r, "cols"]
        if (val[r, "variant"] != "exercise" || n < 1000000 || !((n, "median_ms") in base)) continue
        printf "| %s | %s | %s | %s | %s | %s | %s → %s | %s |\n", count(n), \
            ms(base[n, "median_ms"], 3), num(base[n, "pct_ceiling"], "%.1f"), \
            ms(val[r, "median_ms"], 3), num(val[r, "pct_ceiling"], "%.1f"), \
            times(base[n, "median_ms"] / val[r, "median_ms"]), base[n, "launches"], val[r, "launches"], val[r, "result"]
        shown++
    }
    if (!shown) {
        printf "%s: no exercise timing row from n = 1M up with a multipass row of the same n in %s\n", FILENAME, stage_csv > "/dev/stderr"
        exit 1
    }
    print ""
    printf "*Rows: the fold, %s run of %s ([%s](../../%s)); multipass, run of %s ([%s](../../%s)).*\n", \
        gpu_name(meta["gpu"]), run_said(meta["date"], meta["code"], meta["sources"], stage_of(FILENAME)), run_name(), FILENAME, \
        run_said(base_date, base_code, base_sources, stage_of(stage_csv)), base_name, stage_csv
}
