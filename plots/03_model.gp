# The time model of experiment 3: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run, against n.
name = "03_model"
data = "plots/data/03_fused3kernel.csv"
load "plots/model.gp"
timing(v, x) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? x : NaN

set title "03\\_fused3kernel: measured time over the time its bytes take at the copy ceiling (same run)"
set xlabel "n (elements)"
set logscale x
set format x "10^{%L}"
set xrange [5e4:2e8]
set yrange [0.5:*]
set key top right

draw = 'plot @one, \
            data using (timing("multipass", column("cols"))):(timing("multipass", softmax_ratio(0))) with linespoints pt 9 lw 2 lc rgb "#888888" title "multipass (16 B/elem)", \
            data using (timing("single_block_merge", column("cols"))):(timing("single_block_merge", softmax_ratio(0))) with linespoints pt 5 lw 2 lc rgb "#aa0000" title "single\\_block\\_merge (12 B/elem, merge in one block)", \
            data using (timing("fused", column("cols"))):(timing("fused", softmax_ratio(0))) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "fused (12 B/elem, merge over many blocks)"'
load "plots/style.gp"
