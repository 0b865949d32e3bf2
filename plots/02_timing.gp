# Experiment 2: naive against multipass, time per softmax against n, for each GPU.
name = "02_timing"
stage = "02_multipass"
load "plots/runs.gp"
timing(v, c) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? column(c) : NaN

set title "02\\_multipass against 01\\_naive (same run)"
set xlabel "n (elements)"
set ylabel "median time per softmax (ms)"
set logscale xy
set format x "10^{%L}"
set xrange [500:2e8]
set key top left

draw = 'plot for [i = 1:nruns] run(i) using (timing("naive", "cols")):(timing("naive", "median_ms")) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "naive (12 B/elem, 2 launches)"), \
            for [i = 1:nruns] run(i) using (timing("multipass", "cols")):(timing("multipass", "median_ms")) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "multipass (16 B/elem, 2 per level + 1)"), \
            @gpu_keys'
load "plots/style.gp"
