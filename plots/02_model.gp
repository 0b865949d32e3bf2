# The time model of experiment 2: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run, against n, for each GPU.
name = "02_model"
stage = "02_multipass"
load "plots/runs.gp"
load "plots/model.gp"
timing(v, x) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? x : NaN

set title "02\\_multipass: measured time over the time its bytes take at the copy ceiling (same run)"
set xlabel "n (elements)"
set logscale x
set format x "10^{%L}"
set xrange [500:2e8]
set yrange [0.5:*]
set key top right

draw = 'plot @one, \
            for [i = 1:nruns] run(i) using (timing("naive", column("cols"))):(timing("naive", softmax_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "naive (12 B/elem)"), \
            for [i = 1:nruns] run(i) using (timing("multipass", column("cols"))):(timing("multipass", softmax_ratio(i))) with linespoints pt 5 lw 2 dt i lc rgb "#aa5500" title once(i, "multipass (16 B/elem)"), \
            @gpu_keys'
load "plots/style.gp"
