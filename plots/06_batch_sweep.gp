# The batch sweep of stage 06: the median time of fast (and of torch.topk(torch.softmax(x)), where
# torch_topk.py added its rows, and of the libraries' variants, where the build had them) on the first 1 to 8192 rows of one case, K = 50, one panel for each
# vocabulary and dtype, each GPU in its own dash type. The grey line of each GPU is the time the
# batch's bytes take at the read ceiling of its run: a good curve is flat while the batch is too
# small to fill the GPU, then follows that line. A run without the sweep's rows draws a note.
name = "06_batch_sweep"
stage = "06_fused_topk"
load "plots/runs.gp"
nsweep = int(system(sprintf("cat %s | grep -c '^batch_sweep,' || true", runs)))
ntorch = int(system(sprintf("cat %s | grep -c '^batch_sweep,torch,' || true", runs)))

array V[4] = [50257, 128256, 50257, 128256]
array D[4] = ["float32", "float32", "bf16", "bf16"]
sweep(v, j, x) = (strcol("experiment") eq "batch_sweep" && strcol("variant") eq v && column("cols") == V[j] \
                  && strcol("dtype") eq D[j]) ? x : NaN
at_ceiling(i) = column("bytes_per_row") * column("rows") / (ceiling[i] * 1e9) * 1e3

nlibrary = int(system(sprintf("cat %s | grep -c '^batch_sweep,library,' || true", runs)))
ncub = int(system(sprintf("cat %s | grep -c '^batch_sweep,cub_topk,' || true", runs)))
nflashinfer = int(system(sprintf("cat %s | grep -c '^batch_sweep,flashinfer,' || true", runs)))
fast_colour = "#0055aa"
library_colour = "#6633aa"
cub_colour = "#cc7700"
flashinfer_colour = "#008888"
torch_colour = "#aa0055"
ceiling_colour = "#999999"
# Panel j: its curves carry no titles; the key, drawn once below the panels, names them.
curves(j) = sprintf('for [i = 1:nruns] run(i) using "rows":(sweep("fast", %d, at_ceiling(i))) with lines dt i lw 2 lc rgb ceiling_colour notitle, \
                     for [i = 1:nruns] run(i) using "rows":(sweep("fast", %d, column("median_ms"))) with linespoints pt 7 ps 0.7 lw 2 dt i lc rgb fast_colour notitle', j, j) . \
                    (ntorch > 0 ? sprintf(', for [i = 1:nruns] run(i) using "rows":(sweep("torch", %d, column("median_ms"))) with linespoints pt 3 ps 0.7 lw 2 dt i lc rgb torch_colour notitle', j) : '') . \
                    (nlibrary > 0 ? sprintf(', for [i = 1:nruns] run(i) using "rows":(sweep("library", %d, column("median_ms"))) with linespoints pt 11 ps 0.7 lw 2 dt i lc rgb library_colour notitle', j) : '') . \
                    (ncub > 0 ? sprintf(', for [i = 1:nruns] run(i) using "rows":(sweep("cub_topk", %d, column("median_ms"))) with linespoints pt 4 ps 0.7 lw 2 dt i lc rgb cub_colour notitle', j) : '') . \
                    (nflashinfer > 0 ? sprintf(', for [i = 1:nruns] run(i) using "rows":(sweep("flashinfer", %d, column("median_ms"))) with linespoints pt 6 ps 0.7 lw 2 dt i lc rgb flashinfer_colour notitle', j) : '')
series_keys = 'NaN with linespoints pt 7 lw 2 lc rgb fast_colour title "fast", ' . \
              (ntorch > 0 ? 'NaN with linespoints pt 3 lw 2 lc rgb torch_colour title "torch.topk(torch.softmax(x))", ' : '') . \
              (nlibrary > 0 ? 'NaN with linespoints pt 11 lw 2 lc rgb library_colour title "library (CUB top-K, statistic, sort)", ' : '') . \
              (ncub > 0 ? 'NaN with linespoints pt 4 lw 2 lc rgb cub_colour title "cub\\_topk (top-K alone, logits)", ' : '') . \
              (nflashinfer > 0 ? 'NaN with linespoints pt 6 lw 2 lc rgb flashinfer_colour title "flashinfer (top-K alone, logits)", ' : '') . \
              'NaN with lines lw 2 lc rgb ceiling_colour title "the batch''s bytes at the read ceiling", '

# The axes of every panel; the key's strip changes them, and sets them back after it.
set logscale xy
set xrange [0.7:12000]
set yrange [0.002:50]
set format y "%g"
if (nsweep > 0) {
    # Four panels in two rows, then the key alone in a strip of the full width below them.
    draw = 'set multiplot title "06\\_fused\\_topk: a server''s batches, K = 50: median ms against the rows (same run)"; unset key; '
    do for [j = 1:4] {
        left = 0.08 + ((j - 1) % 2) * 0.5
        top = 0.88 - ((j - 1) / 2) * 0.34
        draw = draw . sprintf('set lmargin at screen %g; set rmargin at screen %g; set tmargin at screen %g; set bmargin at screen %g; ', \
                              left, left + 0.4, top, top - 0.21) . \
               sprintf('set title "V = %d, %s"; set xlabel "%s"; set ylabel "%s"; plot %s; ', V[j], D[j], \
                       j > 2 ? "rows in the batch (log scale)" : "", j % 2 == 1 ? "median ms (log scale)" : "", curves(j))
    }
    draw = draw . 'set lmargin at screen 0.02; set rmargin at screen 0.98; set tmargin at screen 0.21; set bmargin at screen 0.01; \
                   unset title; unset xlabel; unset ylabel; unset border; unset tics; unset grid; unset logscale; \
                   set xrange [0:1]; set yrange [0:1]; set key center center horizontal maxcols 3 nobox; \
                   plot ' . series_keys . gpu_keys . '; \
                   unset multiplot; set border; set tics; set grid; set lmargin; set rmargin; set tmargin; set bmargin; \
                   unset key; set logscale xy; set xrange [0.7:12000]; set yrange [0.002:50]'
} else {
    draw = 'unset key; set title "06\\_fused\\_topk: a server''s batches, K = 50"; \
            set label 1 "no batch\\_sweep rows yet in plots/data/<gpu>/06\\_fused\\_topk.csv" at graph 0.5, 0.5 center; \
            unset logscale y; set yrange [0:1]; unset ytics; plot 2 notitle; unset label 1; set ytics; set autoscale y'
}
load "plots/style.gp"
