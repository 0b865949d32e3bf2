# Experiment 6: time of a top-K over 8192 x 50257 float32 logits, against K, for each variant and
# each GPU; threshold (K <= 64) and the libraries where a run has their rows.
name = "06_k_sweep"
stage = "06_fused_topk"
load "plots/runs.gp"
sweep(v) = (strcol("experiment") eq "k_sweep" && strcol("variant") eq v) ? column("median_ms") : NaN
nthreshold = int(system(sprintf("cat %s | grep -c '^k_sweep,threshold,' || true", runs)))
threshold_curve = nthreshold == 0 ? '' : \
    'for [i = 1:nruns] run(i) using "k":(sweep("threshold")) with linespoints pt 13 dt i lc rgb "#118833" title once(i, "threshold (one threshold a warp, K <= 64)"), '

# The libraries' rows where a run has them (a build with CCCL 3.6, and with FlashInfer's headers):
# library gives fast's answer; cub_topk and flashinfer the logits alone, unsorted.
nlibrary = int(system(sprintf("cat %s | grep -c '^k_sweep,library,' || true", runs)))
ncub = int(system(sprintf("cat %s | grep -c '^k_sweep,cub_topk,' || true", runs)))
nflashinfer = int(system(sprintf("cat %s | grep -c '^k_sweep,flashinfer,' || true", runs)))
library_curves = (nlibrary == 0 ? '' :     'for [i = 1:nruns] run(i) using "k":(sweep("library")) with linespoints pt 11 dt i lc rgb "#6633aa" title once(i, "library (CUB top-K, statistic, sort: the same answer)"), ') .     (ncub == 0 ? '' :     'for [i = 1:nruns] run(i) using "k":(sweep("cub_topk")) with linespoints pt 4 dt i lc rgb "#cc7700" title once(i, "cub\\_topk (its top-K alone, logits)"), ') .     (nflashinfer == 0 ? '' :     'for [i = 1:nruns] run(i) using "k":(sweep("flashinfer")) with linespoints pt 6 dt i lc rgb "#008888" title once(i, "flashinfer (top-K alone, logits)"), ')
# torch where a run has its rows (torch_topk.py adds them): one key entry for every run.
ntorch = int(system(sprintf("cat %s | grep -c '^k_sweep,torch,' || true", runs)))
torch_key = ntorch == 0 ? '' : 'NaN with linespoints pt 3 lc rgb "#aa0055" title "torch.topk(torch.softmax(x))", '
set title "06\\_fused\\_topk: 8192 x 50257 float32, time against K (same run)"
set xlabel "K"
set ylabel "median ms (log scale)"
set logscale xy
set xrange [0.7:1500]
set key below horizontal maxcols 2
set bmargin 4 + ceil((4 + (nthreshold > 0) + (nlibrary > 0) + (ncub > 0) + (nflashinfer > 0) + nruns) / 2.0)

draw = 'plot for [i = 1:nruns] run(i) using "k":(sweep("unfused")) with linespoints pt 7 dt i lc rgb "#888888" title once(i, "unfused (softmax, sort, take K)"), \
            for [i = 1:nruns] run(i) using "k":(sweep("fused")) with linespoints pt 5 dt i lc rgb "#aa5500" title once(i, "fused (warp per row, K <= 32)"), \
            @threshold_curve \
            @library_curves \
            for [i = 1:nruns] run(i) using "k":(sweep("fast")) with linespoints pt 9 dt i lc rgb "#0055aa" title once(i, "fast"), \
            for [i = 1:nruns] run(i) using "k":(sweep("torch")) with linespoints pt 3 dt i lc rgb "#aa0055" notitle, \
            @torch_key @gpu_keys'
load "plots/style.gp"
