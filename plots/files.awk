# Shared by the scripts that read several CSVs (plots/overview.awk, plots/claims.awk), after
# plots/common.awk: each file is read as lib.awk reads one, under its path in plots/data without
# .csv ("h200/02_multipass" for plots/data/h200/02_multipass.csv): meta[file, "key"] from its
# '# key: value' lines, val[file, r, "column"] for its row r, nrows[file] rows.

BEGIN { FS = "," }
FNR == 1 { file = FILENAME; sub(/^plots\/data\//, "", file); sub(/\.csv$/, "", file); ncols[file] = 0 }
/^# / {
    line = substr($0, 3)
    k = index(line, ": ")
    meta[file, substr(line, 1, k - 1)] = substr(line, k + 2)
    next
}
ncols[file] == 0 { for (i = 1; i <= NF; i++) col[file, i] = $i; ncols[file] = NF; next }
{
    n = ++nrows[file]
    for (i = 1; i <= NF; i++) val[file, n, col[file, i]] = $i
    val[file, n, "pct_ceiling"] = pct_ceiling(val[file, n, "gbps"], val[file, n, "ceiling_gbps"],
                                              val[file, n, "pct_ceiling"])
}

# Whether the file `f` was read ("h100-sxm/02_multipass"): a GPU's folder may lack a stage.
function has(f) { return f in ncols }

# The row of `file` with this experiment and variant, and every other column named in `also`
# ("cols=100000000 k=10") equal to the value given; 0 when there is none.
function lookup(f, experiment, variant, also,    r, m, w, i, kv, ok) {
    m = split(also, w, " ")
    for (r = 1; r <= nrows[f]; r++) {
        if (val[f, r, "experiment"] != experiment || val[f, r, "variant"] != variant) continue
        ok = 1
        for (i = 1; i <= m; i++) { split(w[i], kv, "="); if (val[f, r, kv[1]] != kv[2]) ok = 0 }
        if (ok) return r
    }
    return 0
}

# That row, where it must exist: dies when there is none.
function find(f, experiment, variant, also,    r) {
    if (r = lookup(f, experiment, variant, also)) return r
    printf "no row of %s.csv for %s %s %s\n", f, experiment, variant, also > "/dev/stderr"
    exit 1
}

