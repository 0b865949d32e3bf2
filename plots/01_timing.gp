# The naive kernel's effective bandwidth against the copy ceiling measured in the same run, for
# each GPU.
name = "01_timing"
stage = "01_naive"
load "plots/runs.gp"
timing(c) = strcol("experiment") eq "timing" ? column(c) : NaN

set title "01\\_naive: effective bandwidth (8 bytes per element) vs n"
set xlabel "n (elements)"
set ylabel "GB/s"
set logscale x
set format x "10^{%L}"
set yrange [0:*]
set xrange [500:2e8]
set key below horizontal maxcols 2
set bmargin 4 + ceil((3 + nruns) / 2.0)

draw = 'plot for [i = 1:nruns] run(i) using (timing("cols")):(timing("ceiling_gbps")) with lines dt i lw 2 lc rgb "#444444" title once(i, "copy ceiling (same run)"), \
            for [i = 1:nruns] run(i) using (timing("cols")):(timing("ceiling_gbps") * 8 / timing("bytes_per_elem")) with lines dt i lw 2 lc rgb "#888888" title once(i, "best possible at 12 bytes/element"), \
            for [i = 1:nruns] run(i) using (timing("cols")):(timing("gbps")) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "naive"), \
            @gpu_keys'
load "plots/style.gp"
