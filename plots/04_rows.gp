# Experiment 4: the three row mappings against the row length, at 2^25 elements in all, for each
# GPU.
name = "04_rows"
stage = "04_warp"
load "plots/runs.gp"
rows(v, c) = (strcol("experiment") eq "rows_sweep" && strcol("variant") eq v) ? column(c) : NaN

set title "04\\_warp: a softmax per row, rows x cols = 2^{25} (same run)"
set xlabel "cols (row length)"
set ylabel "GB/s (8 bytes per element)"
set logscale x 2
set xrange [24:24000]
set yrange [0:*]
set key below horizontal maxcols 2
set bmargin 4 + ceil((4 + nruns) / 2.0)

draw = 'plot for [i = 1:nruns] run(i) using (rows("thread_per_row", "cols")):(rows("thread_per_row", "ceiling_gbps")) with lines dt i lw 2 lc rgb "#444444" title once(i, "copy ceiling"), \
            for [i = 1:nruns] run(i) using (rows("thread_per_row", "cols")):(rows("thread_per_row", "gbps")) with linespoints pt 9 lw 2 dt i lc rgb "#888888" title once(i, "thread per row"), \
            for [i = 1:nruns] run(i) using (rows("warp_per_row", "cols")):(rows("warp_per_row", "gbps")) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "warp per row (registers)"), \
            for [i = 1:nruns] run(i) using (rows("block_per_row", "cols")):(rows("block_per_row", "gbps")) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "block per row"), \
            @gpu_keys'
load "plots/style.gp"
