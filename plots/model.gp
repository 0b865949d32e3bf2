# Shared by the charts of the time model, plots/NN_model.gp, each loading it after plots/runs.gp.
# The model: the time a row's own bytes take at the ceiling measured in the same run, nothing else
# counted; the charts draw the median time over it (measured / predicted), as the tables of
# EXPERIMENTS.md do (plots/lib.awk, predicted_ms), each run against its own ceiling (ceiling[i]).

# The time in ms that `bytes` take at run i's ceiling.
predicted_ms(i, bytes) = bytes / (ceiling[i] * 1e9) * 1e3
# Measured / predicted for the current row of run i: a softmax moves bytes_per_elem for each of its
# rows x cols elements, a top-K bytes_per_row for each of its rows.
softmax_ratio(i) = column("median_ms") / predicted_ms(i, column("bytes_per_elem") * column("rows") * column("cols"))
topk_ratio(i) = column("median_ms") / predicted_ms(i, column("bytes_per_row") * column("rows"))

# Every model chart: measured / predicted on a log scale (a panel may set it linear, with
# ratio_label), and the line where they are equal.
ratio_label = "measured / predicted time"
set ylabel ratio_label . " (log scale)"
set logscale y
one = '1 with lines dt 2 lw 2 lc rgb "#444444" title "1: the bytes explain the time"'
