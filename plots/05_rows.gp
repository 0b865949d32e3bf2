# Experiment 5: the row softmax against cuDNN, per shape, in GB/s.
name = "05_rows"
data = "plots/data/05_online.csv"
shape_x(c) = column("cols") == 128 ? 0 : (column("cols") == 4096 ? 1 : 2)
rows(v, c) = (strcol("experiment") eq "rows" && strcol("variant") eq v) ? column(c) : NaN
at(v, dx) = (strcol("experiment") eq "rows" && strcol("variant") eq v) ? shape_x(0) + dx : NaN

set title "05\\_online: a softmax per row against cuDNN (same run)"
set ylabel "GB/s (8 bytes per element)"
set xrange [-0.6:2.6]
set yrange [0:4800]
set xtics ("131072 x 128" 0, "4096 x 4096" 1, "8192 x 50257" 2)
set style fill solid 0.8 border -1
set boxwidth 0.25
set key below horizontal
set bmargin 5

draw = 'plot data using (at("cudnn", -0.27)):(rows("cudnn", "gbps")) with boxes lc rgb "#888888" title "cuDNN", \
            data using (at("block_per_row", 0)):(rows("block_per_row", "gbps")) with boxes lc rgb "#aa5500" title "block\\_per\\_row (04)", \
            data using (at("online_rows", 0.27)):(rows("online_rows", "gbps")) with boxes lc rgb "#0055aa" title "online\\_rows", \
            data using (at("cudnn", 0)):(rows("cudnn", "ceiling_gbps")) with points pt 6 ps 2 lw 2 lc rgb "#000000" title "copy ceiling (same run)"'
load "plots/style.gp"
