# Shared look of every chart. A chart script sets `name` and defines the macro `draw` (its plot
# command), then loads this file, which writes plots/<name>.png and plots/<name>.svg.

set datafile separator comma
set datafile columnheaders
# Rows of other variants or experiments evaluate to NaN: skip them without breaking the line.
set datafile missing NaN
set grid lc rgb "#dddddd"
set key box opaque
set border lc rgb "#444444"
do for [format in "png svg"] {
    if (format eq "png") { set terminal pngcairo size 960,540 font "sans,11" } \
    else { set terminal svg size 960,540 font "sans,11" }
    set output sprintf("plots/%s.%s", name, format)
    @draw
    set output
}
