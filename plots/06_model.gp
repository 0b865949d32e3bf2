# The time model of experiment 6: each variant's median time over the time the bytes each row moves
# take at the read ceiling of the same run, for each GPU; left 8192 x 50257 float32 logits against
# K, right a batch of one against the row length V.
name = "06_model"
stage = "06_fused_topk"
load "plots/runs.gp"
load "plots/model.gp"
sweep(v, x) = (strcol("experiment") eq "k_sweep" && strcol("variant") eq v && strcol("dtype") eq "float32") ? x : NaN
batch1(v, x) = (strcol("experiment") eq "batch1" && strcol("variant") eq v) ? x : NaN
# threshold (K <= 64) where a run has its rows.
nthreshold = int(system(sprintf("cat %s | grep -c '^k_sweep,threshold,' || true", runs)))
threshold_curve = nthreshold == 0 ? '' : \
    'for [i = 1:nruns] run(i) using (sweep("threshold", column("k"))):(sweep("threshold", topk_ratio(i))) with linespoints pt 13 lw 2 dt i lc rgb "#118833" title once(i, "threshold (K <= 64)"), '

# torch where a run has its rows (torch_topk.py adds them): one key entry for every run.
ntorch = int(system(sprintf("cat %s | grep -c ',torch,' || true", runs)))
torch_key = ntorch == 0 ? '' : 'NaN with linespoints pt 3 lw 2 lc rgb "#aa0055" title "torch", '
set logscale x
set key top left font ",9"

draw = 'set multiplot layout 1, 2 title "06\\_fused\\_topk: measured time over the time its bytes take at the read ceiling (same run)"; \
        set title "8192 x 50257 float32 logits"; set xlabel "K"; set xrange [0.7:1500]; set xtics autofreq; set yrange [0.5:500]; \
        plot @one, \
             for [i = 1:nruns] run(i) using (sweep("unfused", column("k"))):(sweep("unfused", topk_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#888888" title once(i, "unfused"), \
             for [i = 1:nruns] run(i) using (sweep("torch", column("k"))):(sweep("torch", topk_ratio(i))) with linespoints pt 3 lw 2 dt i lc rgb "#aa0055" notitle, \
             for [i = 1:nruns] run(i) using (sweep("fused", column("k"))):(sweep("fused", topk_ratio(i))) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "fused (K <= 32)"), \
             @threshold_curve \
             for [i = 1:nruns] run(i) using (sweep("fast", column("k"))):(sweep("fast", topk_ratio(i))) with linespoints pt 9 lw 2 dt i lc rgb "#0055aa" title once(i, "fast"), \
             @torch_key @gpu_keys; \
        set title "a batch of one, K = 50, float32"; set xlabel "V (row length)"; set xrange [40000:330000]; \
        set xtics ("50257" 50257, "128256" 128256, "262144" 262144); set yrange [0.5:3e5]; \
        plot @one, \
             for [i = 1:nruns] run(i) using (batch1("unfused", column("cols"))):(batch1("unfused", topk_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#888888" title once(i, "unfused"), \
             for [i = 1:nruns] run(i) using (batch1("torch", column("cols"))):(batch1("torch", topk_ratio(i))) with linespoints pt 3 lw 2 dt i lc rgb "#aa0055" notitle, \
             for [i = 1:nruns] run(i) using (batch1("fast_row", column("cols"))):(batch1("fast_row", topk_ratio(i))) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "fast\\_row (one warp)"), \
             for [i = 1:nruns] run(i) using (batch1("fast", column("cols"))):(batch1("fast", topk_ratio(i))) with linespoints pt 9 lw 2 dt i lc rgb "#0055aa" title once(i, "fast (a cluster of 16 blocks)"), \
             @torch_key @gpu_keys; \
        unset multiplot'
load "plots/style.gp"
