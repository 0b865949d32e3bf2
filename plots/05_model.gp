# The time model of experiment 5: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run; left the one softmax over n (cuDNN's included), right the rows, per
# shape.
name = "05_model"
data = "plots/data/05_online.csv"
load "plots/model.gp"
timing(v, x) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? x : NaN
shape_x(dummy) = column("cols") == 128 ? 0 : (column("cols") == 4096 ? 1 : 2)
at(v, dx) = (strcol("experiment") eq "rows" && strcol("variant") eq v) ? shape_x(0) + dx : NaN

set style fill solid 0.8 border -1
set boxwidth 0.25

draw = 'set multiplot layout 1, 2 title "05\\_online: measured time over the time its bytes take at the copy ceiling (same run)"; \
        set title "one softmax over n"; set xlabel "n (elements)"; set logscale x; set format x "10^{%L}"; set xtics autofreq; set xrange [5e5:2e8]; \
        set logscale y; set yrange [0.5:20000]; set ylabel ratio_label . " (log scale)"; set key top right; \
        plot @one, \
             data using (timing("cudnn", column("cols"))):(timing("cudnn", softmax_ratio(0))) with linespoints pt 3 lw 2 lc rgb "#888888" title "cuDNN (8 B/elem)", \
             data using (timing("multipass", column("cols"))):(timing("multipass", softmax_ratio(0))) with linespoints pt 9 lw 2 lc rgb "#aa0000" title "multipass (16)", \
             data using (timing("fused", column("cols"))):(timing("fused", softmax_ratio(0))) with linespoints pt 5 lw 2 lc rgb "#aa5500" title "fused (12)", \
             data using (timing("fused_warp", column("cols"))):(timing("fused_warp", softmax_ratio(0))) with linespoints pt 13 lw 2 lc rgb "#00aa55" title "fused\\_warp (12)", \
             data using (timing("online", column("cols"))):(timing("online", softmax_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "online (12)"; \
        set title "a softmax per row"; unset xlabel; unset logscale x; set format x "%g"; set xrange [-0.6:2.6]; \
        set xtics ("131072 x 128" 0, "4096 x 4096" 1, "8192 x 50257" 2); \
        unset logscale y; set yrange [0:4]; set ylabel ratio_label; set key top right; \
        plot data using (at("cudnn", -0.27)):(softmax_ratio(0)) with boxes lc rgb "#888888" title "cuDNN (8 B/elem)", \
             data using (at("block_per_row", 0)):(softmax_ratio(0)) with boxes lc rgb "#aa5500" title "block\\_per\\_row (16)", \
             data using (at("online_rows", 0.27)):(softmax_ratio(0)) with boxes lc rgb "#0055aa" title "online\\_rows (8)", \
             @one; \
        unset multiplot'
load "plots/style.gp"
