# The time model of experiment 4: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run, for each GPU; left the one softmax over n, right the rows (2^25
# elements in all) against the row length.
name = "04_model"
stage = "04_warp"
load "plots/runs.gp"
load "plots/model.gp"
timing(v, x) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? x : NaN
rows(v, x) = (strcol("experiment") eq "rows_sweep" && strcol("variant") eq v) ? x : NaN

set yrange [0.5:1000]
set key top right font ",9"

draw = 'set multiplot layout 1, 2 title "04\\_warp: measured time over the time its bytes take at the copy ceiling (same run)"; \
        set title "one softmax over n"; set xlabel "n (elements)"; set logscale x 10; set format x "10^{%L}"; set xtics autofreq; set xrange [5e5:2e8]; \
        plot @one, \
             for [i = 1:nruns] run(i) using (timing("fused", column("cols"))):(timing("fused", softmax_ratio(i))) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "fused (tree, 12 B/elem)"), \
             for [i = 1:nruns] run(i) using (timing("fused_warp", column("cols"))):(timing("fused_warp", softmax_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "fused\\_warp (shuffles, 12 B/elem)"), \
             @gpu_keys; \
        set title "a softmax per row, rows x cols = 2^{25}"; set xlabel "cols (row length)"; set logscale x 2; set format x "%g"; set xtics 32, 4; set xrange [24:24000]; \
        plot @one, \
             for [i = 1:nruns] run(i) using (rows("thread_per_row", column("cols"))):(rows("thread_per_row", softmax_ratio(i))) with linespoints pt 9 lw 2 dt i lc rgb "#888888" title once(i, "thread per row (16 B/elem)"), \
             for [i = 1:nruns] run(i) using (rows("warp_per_row", column("cols"))):(rows("warp_per_row", softmax_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "warp per row (8 B/elem)"), \
             for [i = 1:nruns] run(i) using (rows("block_per_row", column("cols"))):(rows("block_per_row", softmax_ratio(i))) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "block per row (16 B/elem)"), \
             @gpu_keys; \
        unset multiplot'
load "plots/style.gp"
