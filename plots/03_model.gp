# The time model of experiment 3: each variant's median time over the time its own bytes take at the
# copy ceiling of the same run, against n, for each GPU.
name = "03_model"
stage = "03_fused3kernel"
load "plots/runs.gp"
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
            for [i = 1:nruns] run(i) using (timing("multipass", column("cols"))):(timing("multipass", softmax_ratio(i))) with linespoints pt 9 lw 2 dt i lc rgb "#888888" title once(i, "multipass (16 B/elem)"), \
            for [i = 1:nruns] run(i) using (timing("single_block_merge", column("cols"))):(timing("single_block_merge", softmax_ratio(i))) with linespoints pt 5 lw 2 dt i lc rgb "#aa0000" title once(i, "single\\_block\\_merge (12 B/elem, merge in one block)"), \
            for [i = 1:nruns] run(i) using (timing("fused", column("cols"))):(timing("fused", softmax_ratio(i))) with linespoints pt 7 lw 2 dt i lc rgb "#0055aa" title once(i, "fused (12 B/elem, merge over many blocks)"), \
            @gpu_keys'
load "plots/style.gp"
