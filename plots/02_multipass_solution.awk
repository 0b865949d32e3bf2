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
            continue
        }
        n = split(line, f, ",")
        if (nhead == 0) { for (i = 1; i <= n; i++) head[f[i]] = i; nhead = n; continue }
        if (f[head["experiment"]] != "timing" || f[head["variant"]] != "multipass") continue
        for (c in head) base[f[head["cols"]], c] = f[head[c]]
        have = 1
    }
    close(path)
    return have
}

function code_of(c) { return c == "" ? "not recorded" : c }

END {
    if (!lead) exit
    stage_csv = FILENAME
    sub(/_solution\.csv$/, ".csv", stage_csv)
    base_name = stage_csv
    sub(/^plots\/data\//, "", base_name)
    sub(/\.csv$/, "", base_name)
    if (!read_stage_run(stage_csv)) {
        printf "%s: no multipass timing rows in %s to compare with\n", FILENAME, stage_csv > "/dev/stderr"
        exit 1
    }

    block("solution:02_multipass")
    print "| n | multipass ms | % of ceiling | the fold's ms | % of ceiling | speedup | launches | check |"
    print "|---:|---:|---:|---:|---:|---:|---|:---:|"
    m = split(rows_where("experiment", "timing"), t, " ")
    for (i = 1; i <= m; i++) {
        r = t[i]
        n = val[r, "cols"]
        if (val[r, "variant"] != "exercise" || n < 1000000 || !((n, "median_ms") in base)) continue
        printf "| %s | %s | %s | %s | %s | %s | %s → %s | %s |\n", count(n), \
            ms(base[n, "median_ms"], 3), num(base[n, "pct_ceiling"], "%.1f"), \
            ms(val[r, "median_ms"], 3), num(val[r, "pct_ceiling"], "%.1f"), \
            times(base[n, "median_ms"] / val[r, "median_ms"]), base[n, "launches"], val[r, "launches"], val[r, "result"]
    }
    print ""
    printf "Rows of [%s](../../%s) (%s, %s, code %s) and [%s](../../%s) (%s, code %s).\n", \
        run_name(), FILENAME, gpu_name(meta["gpu"]), meta["date"], code_of(meta["code"]), \
        base_name, stage_csv, base_date, code_of(base_code)
}
