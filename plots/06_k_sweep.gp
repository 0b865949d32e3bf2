# Experiment 6: time of a top-K over 8192 x 50257 float32 logits, against K, for each variant.
name = "06_k_sweep"
data = "plots/data/06_fused_topk.csv"
sweep(v) = (strcol("experiment") eq "k_sweep" && strcol("variant") eq v) ? column("median_ms") : NaN

set title "06\\_fused\\_topk: 8192 x 50257 float32, time against K (same run)"
set xlabel "K"
set ylabel "median ms (log scale)"
set logscale xy
set xrange [0.7:1500]
set key below horizontal
set bmargin 6

draw = 'plot data using "k":(sweep("unfused")) with linespoints pt 7 lc rgb "#888888" title "unfused (softmax, sort, take K)", \
            data using "k":(sweep("fused")) with linespoints pt 5 lc rgb "#aa5500" title "fused (warp per row, K <= 32)", \
            data using "k":(sweep("fast")) with linespoints pt 9 lc rgb "#0055aa" title "fast", \
            data using "k":(sweep("torch")) with linespoints pt 3 lc rgb "#aa0055" title "torch.topk(torch.softmax(x))"'
load "plots/style.gp"
