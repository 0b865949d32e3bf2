# Usage: awk -f plots/gather.awk BLOCKS > GATHERED (run by plots/make_plots.sh)
# Passes on the "@@ name" blocks that the scripts printed, except two kinds whose lines come from
# several scripts or from several GPUs' runs, and are put together here:
# - claims: the claims table. Each row's ID (C1, C2, ...) is fixed in its script, with an anchor
#   (#c1, ...) that text can link to; the table lists the rows by ID.
# - ratios: lines "findings<TAB>GPU<TAB>label<TAB>value" (plots/lib.awk, ratio()). A findings block
#   that runs on two GPUs or more sent ratios to gets one more bullet at its end: each label with
#   its value on every GPU that has it, in the order the runs came (the primary GPU first).

/^@@ / { kind = ($0 == "@@ claims") ? "claims" : ($0 == "@@ ratios") ? "ratios" : ""; if (kind == "") print; next }
kind == "" { print; next }
kind == "claims" && /^\| <a id="c[0-9]+">/ { id = substr($0, 11) + 0; row[id] = $0; if (id > last) last = id }
kind == "ratios" {
    split($0, f, "\t")
    t = f[1]; gpu = f[2]; label = f[3]
    if (!(t in ngpus)) targets[++ntargets] = t
    if (!((t, gpu) in seen)) { seen[t, gpu] = 1; ngpus[t]++ }
    if (!((t, label) in values)) labels[t, ++nlabels[t]] = label
    values[t, label] = values[t, label] (nvalues[t, label]++ ? ", " : "") f[4] " (" gpu ")"
}
END {
    print "@@ claims"; print "| ID | claim | measured here | verdict |"; print "|---|---|---|---|"
    for (id = 1; id <= last; id++) if (id in row) print row[id]
    for (i = 1; i <= ntargets; i++) {
        t = targets[i]
        if (ngpus[t] < 2) continue
        line = ""
        for (j = 1; j <= nlabels[t]; j++) {
            label = labels[t, j]
            if (nvalues[t, label] >= 2) line = line (line == "" ? "" : "; ") label ": " values[t, label]
        }
        print "@@ " t
        print "- The GPUs side by side, in ratios within each run (their times do not compare): " line "."
    }
}
