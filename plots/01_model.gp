# The time model of the naive kernel: its median time over the time its 12 bytes per element take
# at the copy ceiling of the same run, against n, for each GPU.
name = "01_model"
stage = "01_naive"
load "plots/runs.gp"
load "plots/model.gp"
timing(v) = strcol("experiment") eq "timing" ? v : NaN

set title "01\\_naive: measured time over the time its bytes take at the copy ceiling (same run)"
set xlabel "n (elements)"
set logscale x
set format x "10^{%L}"
set xrange [500:2e8]
set yrange [0.5:*]
set key top right

draw = 'plot @one, \
            for [i = 1:nruns] run(i) using (timing(column("cols"))):(timing(softmax_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "naive (12 B/elem)"), \
            @gpu_keys'
load "plots/style.gp"
