# The time model of experiment 6: each variant's median time over the time the bytes each row moves
# take at the read ceiling of the same run; left 8192 x 50257 logits against K, right a batch of
# one against the row length V.
name = "06_model"
data = "plots/data/06_fused_topk.csv"
load "plots/model.gp"
sweep(v, dtype, x) = (strcol("experiment") eq (dtype eq "float32" ? "k_sweep" : "dtype") && strcol("variant") eq v && strcol("dtype") eq dtype) ? x : NaN
batch1(v, x) = (strcol("experiment") eq "batch1" && strcol("variant") eq v) ? x : NaN

set logscale x
set key top left

draw = 'set multiplot layout 1, 2 title "06\\_fused\\_topk: measured time over the time its bytes take at the read ceiling (same run)"; \
        set title "8192 x 50257 logits"; set xlabel "K"; set xrange [0.7:1500]; set xtics autofreq; set yrange [0.5:500]; \
        plot @one, \
             data using (sweep("unfused", "float32", column("k"))):(sweep("unfused", "float32", topk_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#888888" title "unfused, float32", \
             data using (sweep("torch", "float32", column("k"))):(sweep("torch", "float32", topk_ratio(0))) with linespoints pt 3 lw 2 lc rgb "#aa0055" title "torch, float32", \
             data using (sweep("fused", "float32", column("k"))):(sweep("fused", "float32", topk_ratio(0))) with linespoints pt 5 lw 2 lc rgb "#aa5500" title "fused, float32 (K <= 32)", \
             data using (sweep("fast", "float32", column("k"))):(sweep("fast", "float32", topk_ratio(0))) with linespoints pt 9 lw 2 lc rgb "#0055aa" title "fast, float32", \
             data using (sweep("fast", "bf16", column("k"))):(sweep("fast", "bf16", topk_ratio(0))) with linespoints pt 8 lw 2 dt 3 lc rgb "#0055aa" title "fast, bf16"; \
        set title "a batch of one, K = 50, float32"; set xlabel "V (row length)"; set xrange [40000:330000]; \
        set xtics ("50257" 50257, "128256" 128256, "262144" 262144); set yrange [0.5:30000]; \
        plot @one, \
             data using (batch1("unfused", column("cols"))):(batch1("unfused", topk_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#888888" title "unfused", \
             data using (batch1("torch", column("cols"))):(batch1("torch", topk_ratio(0))) with linespoints pt 3 lw 2 lc rgb "#aa0055" title "torch", \
             data using (batch1("fast_row", column("cols"))):(batch1("fast_row", topk_ratio(0))) with linespoints pt 5 lw 2 lc rgb "#aa5500" title "fast\\_row (one warp)", \
             data using (batch1("fast", column("cols"))):(batch1("fast", topk_ratio(0))) with linespoints pt 9 lw 2 lc rgb "#0055aa" title "fast (a cluster of 16 blocks)"; \
        unset multiplot'
load "plots/style.gp"
