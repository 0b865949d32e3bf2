# Experiment 3: the speedup of both fused versions over multipass, against n.
name = "03_speedup"
data = "plots/data/03_fused3kernel.csv"
speedup(v) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? column("baseline_ms") / column("median_ms") : NaN
at(v) = (strcol("experiment") eq "timing" && strcol("variant") eq v) ? column("cols") : NaN

set title "03\\_fused3kernel: speedup over multipass (same run)"
set xlabel "n (elements)"
set ylabel "multipass time / variant time"
set logscale x
set format x "10^{%L}"
set xrange [5e4:2e8]
set yrange [0:*]
set key bottom left

draw = 'plot 1 with lines dt 2 lw 2 lc rgb "#444444" title "multipass", \
            data using (at("single_block_merge")):(speedup("single_block_merge")) with linespoints pt 5 lw 2 lc rgb "#aa0000" title "single\\_block\\_merge (merge in one block)", \
            data using (at("fused")):(speedup("fused")) with linespoints pt 7 lw 2 lc rgb "#0055aa" title "fused (merge over many blocks)"'
load "plots/style.gp"
