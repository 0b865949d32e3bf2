# Experiment 3: the speedup of both fused versions over multipass, against n, for each GPU.
name = "03_speedup"
stage = "03_fused3kernel"
load "plots/runs.gp"
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
            for [i = 1:nruns] run(i) using (at("single_block_merge")):(speedup("single_block_merge")) with linespoints pt 5 lw 2 dt i lc rgb "#aa0000" title once(i, "single\\_block\\_merge (merge in one block)"), \
            for [i = 1:nruns] run(i) using (at("fused")):(speedup("fused")) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "fused (merge over many blocks)"), \
            @gpu_keys'
load "plots/style.gp"
