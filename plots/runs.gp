# Shared by the charts of one stage, each loading it after setting `stage` (e.g. "02_multipass"): the
# runs of that stage, one CSV for each GPU folder of plots/data that has it, in the order of `gpus`
# (plots/make_plots.sh passes it, the primary GPU first). run(i) is the i-th of the nruns runs,
# ceiling[i] the ceiling in GB/s that it measured, and gpu_title[i] its name in the key: the GPU and
# that ceiling, both read from the CSV by plots/key.awk.
#
# A chart draws run i in dash type i, each variant in its own colour; a variant's key entry is
# titled on run 1 only (once), and gpu_keys adds one entry for each GPU, its dash type in black.

runs = system(sprintf("for g in %s; do f=plots/data/$g/%s.csv; if [ -f $f ]; then printf '%%s ' $f; fi; done", gpus, stage))
nruns = words(runs)
if (nruns == 0) { print "no plots/data/<gpu>/" . stage . ".csv"; exit status 1 }
run(i) = word(runs, i)

array ceiling[nruns]
array gpu_title[nruns]
do for [i = 1:nruns] {
    key = system("awk -f plots/common.awk -f plots/key.awk " . run(i))
    tab = strstrt(key, "\t")
    ceiling[i] = real(key[1:tab - 1])
    gpu_title[i] = key[tab + 1:]
}

once(i, title) = i == 1 ? title : ""
gpu_keys = 'for [i = 1:nruns] NaN with lines dt i lw 2 lc rgb "#000000" title gpu_title[i] noenhanced'

# Bar charts tell the GPUs apart by how dense a bar's fill is, bar_fill(i), and share each bar's
# slot among them: slot(i, width) is run i's offset from the slot's centre, width the slot's width.
bar_fill(i) = 0.8 / i
slot(i, width) = (i - (nruns + 1) / 2.0) * width / nruns
gpu_box_keys = 'for [i = 1:nruns] NaN with boxes fs solid (bar_fill(i)) lc rgb "#000000" title sprintf("%s (%s bars)", gpu_title[i], i == 1 ? "dark" : "pale") noenhanced'
