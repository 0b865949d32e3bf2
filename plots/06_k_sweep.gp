# Experiment 6: time of a top-K over 8192 x 50257 float32 logits, against K, each GPU in its own
# dash type. Left: the lesson's steps (threshold where a run has its rows, K <= 64). Right: fast
# (and fast_logits, without its softmax) beside the libraries, where a run has their rows (a build
# with CCCL 3.6, with FlashInfer's headers; torch_topk.py adds PyTorch's). The grey line is the time fast's bytes take at the run's
# read ceiling. Each panel's key is below it.
name = "06_k_sweep"
stage = "06_fused_topk"
load "plots/runs.gp"
sweep(v, x) = (strcol("experiment") eq "k_sweep" && strcol("variant") eq v) ? x : NaN
at_ceiling(i) = column("bytes_per_row") * column("rows") / (ceiling[i] * 1e9) * 1e3
has(v) = int(system(sprintf("cat %s | grep -c '^k_sweep,%s,' || true", runs, v))) > 0

# A variant's curves (one a run) and its key entry, where a run has its rows.
style(pt, colour) = sprintf('pt %d lw 2 lc rgb "%s"', pt, colour)
curve(v, pt, colour) = has(v) ? sprintf('for [i = 1:nruns] run(i) using "k":(sweep("%s", column("median_ms"))) \
    with linespoints %s dt i notitle, ', v, style(pt, colour)) : ''
entry(v, pt, colour, title) = has(v) ? sprintf('NaN with linespoints %s title "%s" noenhanced, ', style(pt, colour), title) : ''
ceiling_curve = 'for [i = 1:nruns] run(i) using "k":(sweep("fast", at_ceiling(i))) with lines dt i lw 2 lc rgb "#999999" notitle, '

steps = curve("unfused", 7, "#888888") . curve("fused", 5, "#aa5500") . curve("threshold", 13, "#118833") . \
        curve("fast", 9, "#0055aa")
libraries = curve("fast", 9, "#0055aa") . curve("fast_logits", 8, "#55aaee") . curve("library", 11, "#6633aa") . \
            curve("cub_topk", 4, "#cc7700") . curve("flashinfer", 6, "#008888") . curve("torch", 3, "#aa0055")
ceiling_entry = 'NaN with lines lw 2 lc rgb "#999999" title "fast''s bytes at the read ceiling", '
step_keys = entry("unfused", 7, "#888888", "unfused (softmax, sort, take K)") . \
            entry("fused", 5, "#aa5500", "fused (a warp a row, K <= 32)") . \
            entry("threshold", 13, "#118833", "threshold (one threshold a warp, K <= 64)") . \
            entry("fast", 9, "#0055aa", "fast") . ceiling_entry
library_keys = entry("fast", 9, "#0055aa", "fast") . \
               entry("fast_logits", 8, "#55aaee", "fast_logits (fast without its softmax)") . \
               entry("library", 11, "#6633aa", "library (CUB top-K, statistic, sort)") . \
               entry("cub_topk", 4, "#cc7700", "cub_topk (top-K alone, logits)") . \
               entry("flashinfer", 6, "#008888", "flashinfer (top-K alone, logits)") . \
               entry("torch", 3, "#aa0055", "torch.topk(torch.softmax(x))") . ceiling_entry

set logscale xy
set xrange [0.7:1500]
set yrange [0.2:50]
set xtics ("1" 1, "10" 10, "50" 50, "256" 256, "1024" 1024)
set format y "%g"
panel(l, r, title, curves) = sprintf('set lmargin at screen %g; set rmargin at screen %g; set tmargin at screen 0.88; \
    set bmargin at screen 0.42; set title "%s"; plot %s %s NaN notitle; ', l, r, title, ceiling_curve, curves)
# A panel's key, in a strip below it.
key_strip(l, r, keys) = sprintf('set lmargin at screen %g; set rmargin at screen %g; set tmargin at screen 0.35; \
    set bmargin at screen 0.01; unset title; unset xlabel; unset ylabel; unset border; unset tics; unset grid; \
    unset logscale; set xrange [0:1]; set yrange [0:1]; set key center center vertical maxrows 10 nobox; \
    plot %s %s; unset key; set border; set tics; set grid; set logscale xy; set xrange [0.7:1500]; \
    set yrange [0.2:50]; set xtics ("1" 1, "10" 10, "50" 50, "256" 256, "1024" 1024); ', l, r, keys, gpu_keys)
draw = 'set multiplot title "06\\_fused\\_topk: 8192 x 50257 float32, median ms against K (same run)"; unset key; \
        set xlabel "K"; set ylabel "median ms (log scale)"; ' . \
        panel(0.08, 0.48, "the lesson's steps", steps) . key_strip(0.0, 0.5, step_keys) . \
        'set xlabel "K"; ' . panel(0.57, 0.97, "fast beside the libraries", libraries) . \
        key_strip(0.5, 1.0, library_keys) . 'unset multiplot; set lmargin; set rmargin; set tmargin; set bmargin'
load "plots/style.gp"
