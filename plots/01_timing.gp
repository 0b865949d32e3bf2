# The naive kernel's effective bandwidth against the copy ceiling measured in the same run.
name = "01_timing"
data = "plots/data/01_naive.csv"
timing(c) = strcol("experiment") eq "timing" ? column(c) : NaN

set title "01\\_naive: effective bandwidth (8 bytes per element) vs n"
set xlabel "n (elements)"
set ylabel "GB/s"
set logscale x
set format x "10^{%L}"
set yrange [0:*]
set xrange [500:2e8]
set key at graph 0.02, graph 0.55 left top

draw = 'plot data using (timing("cols")):(timing("ceiling_gbps")) with lines dt 2 lw 2 lc rgb "#444444" title "copy ceiling (same run)", \
            data using (timing("cols")):(timing("ceiling_gbps") * 8 / timing("bytes_per_elem")) with lines dt 3 lw 2 lc rgb "#888888" title "best possible at 12 bytes/element", \
            data using (timing("cols")):(timing("gbps")) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "naive"'
load "plots/style.gp"
