# The batch sweep of stage 06: fast (and torch.topk(torch.softmax(x)), where torch_topk.py added its
# rows) on the first 1 to 8192 rows of one case, K = 50, a line for each vocabulary and dtype: the
# time against the rows (left) and the share of the read ceiling it reaches (right), each GPU in its
# own dash type. A run without the sweep's rows draws a note that says so.
name = "06_batch_sweep"
stage = "06_fused_topk"
load "plots/runs.gp"
nsweep = int(system(sprintf("cat %s | grep -c '^batch_sweep,' || true", runs)))

array V[4] = [50257, 50257, 128256, 128256]
array D[4] = ["float32", "bf16", "float32", "bf16"]
array colour[4] = ["#0055aa", "#66aadd", "#aa5500", "#ddaa66"]
sweep(v, j, c) = (strcol("experiment") eq "batch_sweep" && strcol("variant") eq v && column("cols") == V[j] \
                  && strcol("dtype") eq D[j]) ? column(c) : NaN
# The series carry no titles: the key has an entry for each, drawn apart from the data (as gpu_keys
# does for the GPUs), since a title on a run without the sweep's rows would not show.
lines(c) = sprintf('for [j = 1:4] for [i = 1:nruns] run(i) using "rows":(sweep("fast", j, "%s")) with linespoints pt 7 ps 0.6 dt i lc rgb colour[j] notitle, \
                    for [j = 1:4] for [i = 1:nruns] run(i) using "rows":(sweep("torch", j, "%s")) with linespoints pt 6 ps 0.6 dt i lc rgb colour[j] notitle', c, c)
ntorch = int(system(sprintf("cat %s | grep -c '^batch_sweep,torch,' || true", runs)))
series_keys = 'for [j = 1:4] NaN with linespoints pt 7 ps 0.6 lc rgb colour[j] title sprintf("fast, V = %d %s", V[j], D[j])' . \
              (ntorch > 0 ? ', for [j = 1:4] NaN with linespoints pt 6 ps 0.6 lc rgb colour[j] title sprintf("torch, V = %d %s", V[j], D[j])' : '')

set xlabel "rows in the batch (log scale)"
set logscale x
set xrange [0.7:12000]
if (nsweep > 0) {
    # Two panels one above the other, the key once, to the right of both.
    draw = 'set multiplot layout 2,1 title "06\\_fused\\_topk: a server''s batches, K = 50 (same run)"; ' . \
           'set rmargin at screen 0.56; set key at screen 0.99, screen 0.9 right top vertical; ' . \
           'set ylabel "median ms (log scale)"; set logscale y; plot ' . lines("median_ms") . ', ' . series_keys . ', ' . gpu_keys . '; ' . \
           'unset key; unset logscale y; set ylabel "% of the read ceiling"; set yrange [0:100]; plot ' . \
           lines("pct_ceiling") . '; unset multiplot; set autoscale y; set key; set rmargin'
} else {
    draw = 'set title "06\\_fused\\_topk: a server''s batches, K = 50"; \
            set label 1 "no batch\\_sweep rows yet in plots/data/<gpu>/06\\_fused\\_topk.csv" at graph 0.5, 0.5 center; \
            set yrange [0:1]; unset ytics; plot 2 notitle; unset label 1; set ytics; set autoscale y'
}
load "plots/style.gp"
