# The README's overview: each step of the two roads as a percent of the ceiling measured in its run,
# its median time above the bar, on the primary GPU (the first of `gpus`, which plots/make_plots.sh
# passes). One softmax over 10^8 floats (naive from stage 02's run, the rest and cuDNN from stage
# 05's), then top-10 of 8192 x 50257 float32 logits (stage 06's run). The libraries' bars are grey.
name = "00_overview"
primary = word(gpus, 1)
naive_run = "plots/data/" . primary . "/02_multipass.csv"
softmax_run = "plots/data/" . primary . "/05_online.csv"
topk_run = "plots/data/" . primary . "/06_fused_topk.csv"

softmax_x(v) = v eq "multipass" ? 1 : v eq "fused" ? 2 : v eq "fused_warp" ? 3 : v eq "online" ? 4 : v eq "cudnn" ? 5 : NaN
# threshold, the step between fused and fast, where the run has its row.
threshold = int(system("grep -c '^workload,threshold,float32,' " . topk_run . " || true")) > 0
last = threshold ? 11 : 10
topk_x(v) = v eq "torch" ? 7 : v eq "unfused" ? 8 : v eq "fused" ? 9 : (threshold && v eq "threshold") ? 10 : v eq "fast" ? last : NaN
one_d = 'strcol("experiment") eq "timing" && column("cols") == 100000000'
# The place of the row's step on the chart, or NaN for a row of no step.
naive_x(dummy) = (@one_d && strcol("variant") eq "naive") ? 0 : NaN
softmax_step_x(dummy) = @one_d ? softmax_x(strcol("variant")) : NaN
topk_step_x(dummy) = (strcol("experiment") eq "workload" && strcol("dtype") eq "float32" && column("k") == 10) ? topk_x(strcol("variant")) : NaN
colour(dummy) = (strcol("variant") eq "cudnn" || strcol("variant") eq "torch") ? 0x888888 : 0x0055aa
ms(dummy) = sprintf(column("median_ms") < 1 ? "%.3f ms" : "%.2f ms", column("median_ms"))

set title "Percent of the ceiling measured in the same run, and the median time"
set ylabel "% of the run's ceiling"
set xrange [-0.7:last + 0.7]
set yrange [0:115]
# Room under the axis for the two-line label of the first bar.
set bmargin 4
set xtics ("naive\n(overflows)" 0, "multipass" 1, "fused" 2, "fused\\_warp" 3, "online" 4, "cuDNN" 5, \
           "PyTorch" 7, "unfused" 8, "fused" 9, "fast" last)
if (threshold) { set xtics add ("threshold" 10) }
set style fill solid 0.8 border -1
set boxwidth 0.6
set label 1 "one softmax over 10^8 floats (copy ceiling)" at 2.5, 108 center
set label 2 "top-10 of 8192 x 50257 logits (read ceiling)" at (7 + last) / 2.0, 108 center
set arrow 1 from 6, 0 to 6, 115 nohead dt 2 lc rgb "#888888"

draw = 'unset key; plot naive_run using (naive_x(0)):"pct_ceiling":(colour(0)) with boxes lc rgb variable notitle, \
            softmax_run using (softmax_step_x(0)):"pct_ceiling":(colour(0)) with boxes lc rgb variable notitle, \
            topk_run using (topk_step_x(0)):"pct_ceiling":(colour(0)) with boxes lc rgb variable notitle, \
            naive_run using (naive_x(0)):(column("pct_ceiling") + 3):(ms(0)) with labels font ",9" notitle, \
            softmax_run using (softmax_step_x(0)):(column("pct_ceiling") + 3):(ms(0)) with labels font ",9" notitle, \
            topk_run using (topk_step_x(0)):(column("pct_ceiling") + 3):(ms(0)) with labels font ",9" notitle'
load "plots/style.gp"
