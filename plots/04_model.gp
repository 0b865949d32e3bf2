# The time model of experiment 4: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run; left the one softmax over n, right the rows (2^25 elements in all)
# against the row length.
name = "04_model"
data = "plots/data/04_warp.csv"
load "plots/model.gp"
timing(v, x) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? x : NaN
rows(v, x) = (strcol("experiment") eq "rows_sweep" && strcol("variant") eq v) ? x : NaN

set yrange [0.5:1000]
set key top right

draw = 'set multiplot layout 1, 2 title "04\\_warp: measured time over the time its bytes take at the copy ceiling (same run)"; \
        set title "one softmax over n"; set xlabel "n (elements)"; set logscale x 10; set format x "10^{%L}"; set xtics autofreq; set xrange [5e5:2e8]; \
        plot @one, \
             data using (timing("fused", column("cols"))):(timing("fused", softmax_ratio(0))) with linespoints pt 5 lw 2 lc rgb "#aa5500" title "fused (tree, 12 B/elem)", \
             data using (timing("fused_warp", column("cols"))):(timing("fused_warp", softmax_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "fused\\_warp (shuffles, 12 B/elem)"; \
        set title "a softmax per row, rows x cols = 2^{25}"; set xlabel "cols (row length)"; set logscale x 2; set format x "%g"; set xtics 32, 4; set xrange [24:24000]; \
        plot @one, \
             data using (rows("thread_per_row", column("cols"))):(rows("thread_per_row", softmax_ratio(0))) with linespoints pt 9 lw 2 lc rgb "#888888" title "thread per row (16 B/elem)", \
             data using (rows("warp_per_row", column("cols"))):(rows("warp_per_row", softmax_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "warp per row (8 B/elem)", \
             data using (rows("block_per_row", column("cols"))):(rows("block_per_row", softmax_ratio(0))) with linespoints pt 5 lw 2 lc rgb "#aa5500" title "block per row (16 B/elem)"; \
        unset multiplot'
load "plots/style.gp"
