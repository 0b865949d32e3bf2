# The time model of the naive kernel: its median time over the time its 12 bytes per element take
# at the copy ceiling of the same run, against n.
name = "01_model"
data = "plots/data/01_naive.csv"
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
            data using (timing(column("cols"))):(timing(softmax_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "naive (12 B/elem)"'
load "plots/style.gp"
