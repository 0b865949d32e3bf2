# The README's results at a glance, from three CSVs of the primary GPU (its folder: the variable
# primary, set by plots/make_plots.sh): plots/data/<primary>/02_multipass.csv (naive),
# 05_online.csv (multipass to online, and cuDNN, in one run) and 06_fused_topk.csv (PyTorch to fast,
# in one run). Prints the block that replaces <!-- BEGIN overview --> ... <!-- END overview --> in
# README.md. Each file is read as plots/files.awk reads it, under its path in plots/data.

function ms(x) { return sprintf(x < 10 ? "%.3f" : "%.2f", x) }

# The date, code and sources of the run f, as common.awk's provenance line says them.
function said(f) { return run_said(meta[f, "date"], meta[f, "code"], meta[f, "sources"], stage_of(f)) }

# One step of a road: its name, the stage that teaches it, time, % of the run's ceiling, check,
# and its speedup over the step before (none for the first, or with prev_ms 0).
function step(what, stage, f, r, prev_ms) {
    printf "| %s | %s | %s | %.1f | %s | %s |\n", what, stage, ms(val[f, r, "median_ms"]), val[f, r, "pct_ceiling"], \
        val[f, r, "result"], prev_ms ? sprintf("%.2f×", prev_ms / val[f, r, "median_ms"]) : ""
    return val[f, r, "median_ms"]
}

# The ceiling's own row: the time the row's bytes would take at the ceiling measured in its run.
function ceiling_row(what, f, r, bytes) {
    printf "| %s | | %s | 100 | | |\n", what, ms(bytes / (val[f, r, "ceiling_gbps"] * 1e9) * 1e3)
}

END {
    naive_run = primary "/02_multipass"; softmax_run = primary "/05_online"; topk_run = primary "/06_fused_topk"
    n = "cols=100000000"
    naive = find(naive_run, "timing", "naive", n)
    multipass = find(softmax_run, "timing", "multipass", n)
    print "@@ overview"
    print "**One softmax over 10⁸ floats**, uniform in [0, 10] (where even the naive kernel passes): the"
    print "median time; the percent of the ceiling (the time the 8 bytes of each element take at the copy"
    print "speed measured in the same run, over the step's time); the check against the fp64 reference;"
    print "and the speedup over the row above (below 1: slower)."
    print ""
    print "| step | stage | ms | % of ceiling | check | speedup |"
    print "|---|---|---:|---:|:---:|---:|"
    t = step("naive: exp(x) / Σ exp(x), [overflows](01_naive) past x = 88.7", "01", naive_run, naive, 0)
    step("multipass: max, then sum, then normalize", "02", naive_run, find(naive_run, "timing", "multipass", n), t)
    t = val[softmax_run, multipass, "median_ms"] # the next speedups compare rows of stage 05's run
    t = step("fused: block statistics, one merge, normalize", "03", softmax_run, find(softmax_run, "timing", "fused", n), t)
    t = step("fused_warp: the same with warp shuffles", "04", softmax_run, find(softmax_run, "timing", "fused_warp", n), t)
    t = step("online: max and sum in one read", "05", softmax_run, find(softmax_run, "timing", "online", n), t)
    step("cuDNN `cudnnSoftmaxForward`, asked for one row of 10⁸", "05", softmax_run, find(softmax_run, "timing", "cudnn", n), 0)
    ceiling_row("copy ceiling: the 8 bytes an element must move", softmax_run, multipass, 8e8)
    print ""
    printf "*Rows: %s runs of stage 02 (naive and multipass), %s, and of stage 05 (the rest), %s. Each\n", \
        gpu_name(meta[softmax_run, "gpu"]), said(naive_run), said(softmax_run)
    printf "speedup compares two rows of one run: fused's is over stage 05's multipass row, %s ms.*\n", \
        ms(val[softmax_run, multipass, "median_ms"])
    print ""
    r = find(softmax_run, "rows", "cudnn", "cols=50257")
    printf "cuDNN's FAIL: its error reaches %.1e, past the 1e-4 the check allows, on this one long row, a\n", \
        val[softmax_run, find(softmax_run, "timing", "cudnn", n), "max_rel_err"]
    printf "shape it is not built for; on rows of 50257 it passes at %.0f %% of the ceiling (Experiment 5).\n", \
        val[softmax_run, r, "pct_ceiling"]
    print ""

    w = "dtype=float32 k=10"
    torch = lookup(topk_run, "workload", "torch", w) # torch_topk.py's rows, where it ran
    print "**Top-10 of the softmax of 8192 rows of 50257 logits** (float32), one run, against the ceiling"
    print "of reading the logits once:"
    print ""
    print "| step | stage | ms | % of ceiling | check | speedup |"
    print "|---|---|---:|---:|:---:|---:|"
    t = 0
    if (torch)
        t = step("PyTorch: `torch.topk(torch.softmax(x), 10)`", "", topk_run, torch, 0)
    else
        print "| PyTorch: not in this run (`torch_topk.py` adds its row where torch imports) | | | | | |"
    t = step("unfused: softmax written, then CUB's segmented sort", "06", topk_run, find(topk_run, "workload", "unfused", w), t)
    t = step("fused: a warp per row keeps its top K beside the online statistic", "06", topk_run, find(topk_run, "workload", "fused", w), t)
    # The threshold step's row is there where the run measured it.
    if (th = lookup(topk_run, "workload", "threshold", w))
        t = step("threshold: one bar for the warp turns most logits away unsorted", "06", topk_run, th, t)
    t = step(th ? "fast: 16-byte loads, a fast exp, a first bar from a sample" \
                : "fast: 16-byte loads; a threshold turns most logits away unsorted", "06", topk_run, \
             find(topk_run, "workload", "fast", w), t)
    ceiling_row("read ceiling: the logits read once", topk_run, find(topk_run, "workload", "fast", w), 8192 * 50257 * 4)
    print ""
    print provenance_line(gpu_name(meta[topk_run, "gpu"]), meta[topk_run, "date"], meta[topk_run, "code"], \
        meta[topk_run, "sources"], stage_of(topk_run))
    print ""
    if (torch) {
        print "PyTorch's FAIL is a convention, not wrong probabilities: among tied ones it does not always put"
        print "the lower index first, as the course's reference does"
        print "([Experiment 6](EXPERIMENTS.md#experiment-6--top-k-of-a-softmax-without-writing-the-softmax-06_fused_topk))."
    }
}
