# The GPUs measured, EXPERIMENTS.md's block "gpus", from the files of plots/data/<gpu>/ given in
# plots/make_plots.sh's order (the primary GPU's first; the variable primary names its folder): one
# line for each folder, with the GPU's name from the first '# gpu:' line of its CSVs or 'GPU:' line
# of its Nsight Compute logs, the stages of its CSVs and its logs.

FNR == 1 {
    dir = gpu_folder(FILENAME)
    file = FILENAME
    sub(/.*\//, "", file)
    if (!(dir in seen)) { seen[dir] = 1; order[++n] = dir }
    if (sub(/\.csv$/, "", file)) stages[dir] = stages[dir] (stages[dir] == "" ? "" : ", ") file
    else if (sub(/\.log$/, "", file)) logs[dir] = logs[dir] (logs[dir] == "" ? "" : ", ") file
}
/^# gpu: / && !(dir in name) { name[dir] = gpu_name(substr($0, 8)) }
/^GPU: / && !(dir in name) { name[dir] = gpu_name(substr($0, 6)) }
END {
    print "@@ gpus"
    for (i = 1; i <= n; i++) {
        d = order[i]
        printf "- **%s** ([plots/data/%s/](plots/data/%s))%s: runs %s%s.\n", name[d], d, d, (d == primary) ? ", the primary GPU" : "", \
            (stages[d] == "") ? "none" : stages[d], (logs[d] == "") ? "" : "; Nsight Compute: " logs[d]
    }
}
