# Experiment 1: where the naive softmax breaks, as the inputs' top end h grows, for each GPU.
name = "01_overflow"
stage = "01_naive"
load "plots/runs.gp"
sweep(c) = strcol("experiment") eq "overflow_sweep" ? column(c) : NaN

set title "01\\_naive: inputs uniform in [h-10, h], n = 1000"
set xlabel "largest input h"
set ylabel "fraction of n / sum of outputs"
set yrange [-0.05:1.15]
set xrange [80:100]
# Two thresholds of float32, computed, not measured: ln(FLT_MAX) = 88.72 for one exp, and about
# 4.6 less (ln of n/10) for the sum of 1000 exps spread over [h-10, h].
set arrow 1 from 88.72, graph 0 to 88.72, graph 1 nohead dt 2 lc rgb "#aa0000"
set label 1 "one exp(x) overflows: x > ln(FLT\\_MAX) = 88.72" at 88.9, 1.08 tc rgb "#aa0000"
set arrow 2 from 84.12, graph 0 to 84.12, graph 1 nohead dt 2 lc rgb "#0055aa"
set label 2 "the sum overflows: h > 84.1" at 80.3, 1.08 tc rgb "#0055aa"
set key below maxcols 2
set bmargin 4 + ceil((2 + nruns) / 2.0)

draw = 'plot for [i = 1:nruns] run(i) using (sweep("hi")):(sweep("row_sum")) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "sum of outputs (should be 1; NaN not drawn)"), \
            for [i = 1:nruns] run(i) using (sweep("hi")):(sweep("nonfinite") / column("cols")) with linespoints pt 5 lw 2 dt i lc rgb "#aa0000" title once(i, "fraction of outputs NaN"), \
            @gpu_keys'
load "plots/style.gp"
