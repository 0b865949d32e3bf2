# Usage: awk -f plots/gather.awk BLOCKS > GATHERED (run by plots/make_plots.sh)
# Passes on the "@@ name" blocks that the scripts printed, except three kinds whose lines come from
# several scripts or from several GPUs' runs, and are put together here:
# - claims: the claims table. Each row's ID (C1, C2, ...) is fixed in its script, with an anchor
#   (#c1, ...) that text can link to; the table lists the rows by ID, then the line that names the
#   runs they read (the lines of a claims block that start with '*', plots/claims.awk's).
# - ratios: lines "findings<TAB>GPU<TAB>label<TAB>value" (plots/lib.awk, ratio()). A findings block
#   that runs on two GPUs or more sent ratios to gets one more bullet at its end: each label with
#   its value on every GPU that has it, in the order the runs came (the primary GPU first).
# - goals: lines "findings<TAB>GPU<TAB>goal<TAB>verdict<TAB>measured" (plots/06_fused_topk.awk), a
#   verdict of every GPU's run on each of a stage's goals. The findings block gets one more bullet
#   for each GPU after the first (the primary): the goals whose verdict there differs from the
#   first GPU's, or that there is none.

/^@@ / { kind = ($0 == "@@ claims") ? "claims" : ($0 == "@@ ratios") ? "ratios" : ($0 == "@@ goals") ? "goals" : ""; if (kind == "") print; next }
kind == "" { print; next }
kind == "claims" && /^\| <a id="c[0-9]+">/ { id = substr($0, 11) + 0; row[id] = $0; if (id > last) last = id }
kind == "claims" && /^\*/ { footer = footer "\n" $0 }
kind == "ratios" {
    split($0, f, "\t")
    t = f[1]; gpu = f[2]; label = f[3]
    if (!(t in ngpus)) targets[++ntargets] = t
    if (!((t, gpu) in seen)) { seen[t, gpu] = 1; ngpus[t]++ }
    if (!((t, label) in values)) labels[t, ++nlabels[t]] = label
    values[t, label] = values[t, label] (nvalues[t, label]++ ? ", " : "") f[4] " (" gpu ")"
}
kind == "goals" {
    split($0, f, "\t")
    t = f[1]; gpu = f[2]
    if (!(t in goal_gpus)) { goal_targets[++ngoal_targets] = t; first_gpu[t] = gpu }
    if (!((t, gpu) in goal_seen)) { goal_seen[t, gpu] = 1; goal_gpu[t, ++goal_gpus[t]] = gpu }
    if (gpu == first_gpu[t]) { goal_names[t, ++ngoal_names[t]] = f[3]; first_verdict[t, f[3]] = f[4] }
    verdict[t, gpu, f[3]] = f[4]; measured[t, gpu, f[3]] = f[5]
}
END {
    print "@@ claims"; print "| ID | claim | measured here | verdict |"; print "|---|---|---|---|"
    for (id = 1; id <= last; id++) if (id in row) print row[id]
    if (footer != "") print footer
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
    for (i = 1; i <= ngoal_targets; i++) {
        t = goal_targets[i]
        for (k = 2; k <= goal_gpus[t]; k++) {
            gpu = goal_gpu[t, k]
            line = ""
            for (j = 1; j <= ngoal_names[t]; j++) {
                name = goal_names[t, j]
                if (!((t, gpu, name) in verdict) || verdict[t, gpu, name] == first_verdict[t, name]) continue
                line = line (line == "" ? "" : "; ") name ": " measured[t, gpu, name] ", **" verdict[t, gpu, name] "** (on the " first_gpu[t] ": " first_verdict[t, name] ")"
            }
            print "@@ " t
            if (line == "") print "- On the " gpu "'s run, against its own ceiling, every verdict is the same as on the " first_gpu[t] "."
            else print "- On the " gpu "'s run, against its own ceiling, the verdicts differ here: " line "."
        }
    }
}
