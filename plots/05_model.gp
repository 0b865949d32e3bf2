# The time model of experiment 5: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run, for each GPU; left the one softmax over n, online against the stage
# before (fused_warp, which moves the same bytes) and cuDNN; right the rows, per shape, each GPU's bar
# beside the other's within each variant's slot.
name = "05_model"
stage = "05_online"
load "plots/runs.gp"
load "plots/model.gp"
timing(v, x) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? x : NaN
shape_x(dummy) = column("cols") == 128 ? 0 : (column("cols") == 4096 ? 1 : 2)
at(v, dx, i) = (strcol("experiment") eq "rows" && strcol("variant") eq v) ? shape_x(0) + dx + slot(i, 0.25) : NaN

set style fill solid 0.8 border -1
set boxwidth 0.25 / nruns
set key font ",9"

draw = 'set multiplot layout 1, 2 title "05\\_online: measured time over the time its bytes take at the copy ceiling (same run)"; \
        set title "one softmax over n"; set xlabel "n (elements)"; set logscale x; set format x "10^{%L}"; set xtics autofreq; set xrange [5e5:2e8]; \
        set logscale y; set yrange [0.5:1e5]; set format y "10^{%L}"; set ylabel ratio_label . " (log scale)"; set key top right; \
        plot @one, \
             for [i = 1:nruns] run(i) using (timing("cudnn", column("cols"))):(timing("cudnn", softmax_ratio(i))) with linespoints pt 3 lw 2 dt i lc rgb "#888888" title once(i, "cuDNN (8 B/elem)"), \
             for [i = 1:nruns] run(i) using (timing("fused_warp", column("cols"))):(timing("fused_warp", softmax_ratio(i))) with linespoints pt 13 lw 2 dt i lc rgb "#00aa55" title once(i, "fused\\_warp (12)"), \
             for [i = 1:nruns] run(i) using (timing("online", column("cols"))):(timing("online", softmax_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "online (12)"), \
             @gpu_keys; \
        set title "a softmax per row"; unset xlabel; unset logscale x; set format x "%g"; set xrange [-0.6:2.6]; \
        set xtics ("131072 x 128" 0, "4096 x 4096" 1, "8192 x 50257" 2); \
        unset logscale y; set format y "%g"; set yrange [0:5]; set ylabel ratio_label; set key top right font ",8"; \
        plot for [i = 1:nruns] run(i) using (at("cudnn", -0.27, i)):(softmax_ratio(i)) with boxes fs solid (bar_fill(i)) lc rgb "#888888" title once(i, "cuDNN (8 B/elem)"), \
             for [i = 1:nruns] run(i) using (at("block_per_row", 0, i)):(softmax_ratio(i)) with boxes fs solid (bar_fill(i)) lc rgb "#aa5500" title once(i, "block\\_per\\_row (16)"), \
             for [i = 1:nruns] run(i) using (at("online_rows", 0.27, i)):(softmax_ratio(i)) with boxes fs solid (bar_fill(i)) lc rgb "#0055aa" title once(i, "online\\_rows (8)"), \
             @one, \
             @gpu_box_keys; \
        unset multiplot'
load "plots/style.gp"
