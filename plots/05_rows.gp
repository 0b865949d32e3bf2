# Experiment 5: the row softmax against cuDNN, per shape, in GB/s, each GPU's bar beside the
# other's within each variant's slot, each under a cap at the copy ceiling of its run.
name = "05_rows"
stage = "05_online"
load "plots/runs.gp"
shape_x(c) = column("cols") == 128 ? 0 : (column("cols") == 4096 ? 1 : 2)
rows(v, c) = (strcol("experiment") eq "rows" && strcol("variant") eq v) ? column(c) : NaN
at(v, dx, i) = (strcol("experiment") eq "rows" && strcol("variant") eq v) ? shape_x(0) + dx + slot(i, 0.25) : NaN

set title "05\\_online: a softmax per row against cuDNN (same run)"
set ylabel "GB/s (8 bytes per element)"
set xrange [-0.6:2.6]
set yrange [0:4800]
set xtics ("131072 x 128" 0, "4096 x 4096" 1, "8192 x 50257" 2)
set style fill solid 0.8 border -1
set boxwidth 0.25 / nruns
# The key below the chart, one entry a line: its longer titles do not fit two a line.
set key below vertical
set bmargin 3 + 4 + nruns
# Each bar has a cap at the copy ceiling of its run: the variants, and their offsets in a slot.
array variant[3] = ["cudnn", "block_per_row", "online_rows"]
array dx[3] = [-0.27, 0, 0.27]

draw = 'plot for [i = 1:nruns] run(i) using (at("cudnn", -0.27, i)):(rows("cudnn", "gbps")) with boxes fs solid (bar_fill(i)) lc rgb "#888888" title once(i, "cuDNN"), \
            for [i = 1:nruns] run(i) using (at("block_per_row", 0, i)):(rows("block_per_row", "gbps")) with boxes fs solid (bar_fill(i)) lc rgb "#aa5500" title once(i, "block\\_per\\_row (04)"), \
            for [i = 1:nruns] run(i) using (at("online_rows", 0.27, i)):(rows("online_rows", "gbps")) with boxes fs solid (bar_fill(i)) lc rgb "#0055aa" title once(i, "online\\_rows"), \
            for [k = 1:3] for [i = 1:nruns] run(i) using (at(variant[k], dx[k], i) - 0.125 / nruns):(rows(variant[k], "ceiling_gbps")):(0.25 / nruns):(0) \
                with vectors nohead lw 3 lc rgb "#000000" title (k == 1 && i == 1 ? "copy ceiling (same run as the bar)" : ""), \
            @gpu_box_keys'
load "plots/style.gp"
