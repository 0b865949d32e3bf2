# Experiment 4: the three row mappings against the row length, at 2^25 elements in all.
name = "04_rows"
data = "plots/data/04_warp.csv"
rows(v, c) = (strcol("experiment") eq "rows_sweep" && strcol("variant") eq v) ? column(c) : NaN

set title "04\\_warp: a softmax per row, rows x cols = 2^{25} (same run)"
set xlabel "cols (row length)"
set ylabel "GB/s (8 bytes per element)"
set logscale x 2
set xrange [24:24000]
set yrange [0:*]
set key at graph 0.98, graph 0.86 right top

draw = 'plot data using (rows("thread_per_row", "cols")):(rows("thread_per_row", "ceiling_gbps")) with lines dt 2 lw 2 lc rgb "#444444" title "copy ceiling", \
            data using (rows("thread_per_row", "cols")):(rows("thread_per_row", "gbps")) with linespoints pt 9 lw 2 lc rgb "#888888" title "thread per row", \
            data using (rows("warp_per_row", "cols")):(rows("warp_per_row", "gbps")) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "warp per row (registers)", \
            data using (rows("block_per_row", "cols")):(rows("block_per_row", "gbps")) with linespoints pt 5 lw 2 lc rgb "#aa5500" title "block per row"'
load "plots/style.gp"
