# The claims-table rows that rest on more than one stage's data, or on a stage's data read against a
# figure the claim quotes (run after plots/common.awk and plots/files.awk, with every CSV of
# plots/data/<gpu>/ as input and primary, the primary GPU's folder, set by plots/make_plots.sh):
# from the primary GPU's 02_multipass.csv, 04_warp.csv and 06_fused_topk.csv, from Nsight Compute's
# report on fused (plots/data/h100-sxm/ncu_06_fused.log), and, against a published run on an H100
# PCIe, from our H100's 02_multipass.csv and 03_fused3kernel.csv (plots/data/h100-sxm/), each row
# where its file is there. Every number printed comes from those files; the claims' own figures are
# quoted as the claims state them.

# The first kernel of an Nsight Compute log (Launch Statistics and Occupancy sections), as
# ncu[metric name] = value; ncu["GPU"] is the name of the GPU the program said it ran on.
# A metric's line is its name (words one space apart), then its unit if any, then its value.
function read_ncu(path,    line, n, w, name) {
    while ((getline line < path) > 0) {
        if (line ~ /^GPU: /) ncu["GPU"] = gpu_name(substr(line, 6))
        if (line ~ /^  [^ ].*<[0-9]+>\(/ && !("template" in ncu)) { ncu["template"] = line; sub(/^[^<]*</, "", ncu["template"]); sub(/>.*/, "", ncu["template"]) }
        if (!match(line, /^    [A-Z#][^ ]*( [^ ]+)*/)) continue
        name = substr(line, 5, RLENGTH - 4)
        n = split(line, w, " ")
        if (!(name in ncu)) ncu[name] = w[n]
    }
    close(path)
    if (!("Registers Per Thread" in ncu)) { print path ": no Launch Statistics section" > "/dev/stderr"; exit 1 }
}

function us(ms) { return sprintf("%.1f µs", 1000 * ms) }

# The order of the runs in the line under the table: the primary GPU's first, then by path.
function run_order(f) { return (substr(f, 1, length(primary) + 1) == primary "/" ? "0 " : "1 ") f }
function speedup(base, r, f) { return sprintf("%.2f×", val[f, base, "median_ms"] / val[f, r, "median_ms"]) }

# Two median times compared as the stage programs compare them: rel "overhead" (the second's extra
# time, "+71 %") or "speedup" (the first's time over the second's, "2.75×").
function compared(base_ms, ms, rel) {
    return rel == "overhead" ? sprintf("%+.0f %%", 100 * (ms / base_ms - 1)) : sprintf("%.2f×", base_ms / ms)
}

# A published run's table beside ours, for the rows C21 and C22: `theirs` lists, for each size n,
# "n:base_ms:ms" (their baseline's median, then the variant's), as they report them. Sets cell[1] to
# their figures ("0.035 against 0.060 ms at n = 1K (+71 %), ..."), cell[2] to ours from the run `f`
# (the same, base and variant the rows compared), lo[1..2] and hi[1..2] to the least and the largest
# of their and our ratios (the overhead in %, or the speedup).
function beside(theirs, f, base, variant, rel,    m, w, i, p, b, v, x, y, k, r) {
    m = split(theirs, w, " ")
    cell[1] = cell[2] = ""
    for (i = 1; i <= m; i++) {
        split(w[i], p, ":")
        b = find(f, "timing", base, "cols=" p[1]); v = find(f, "timing", variant, "cols=" p[1])
        x[1] = p[2]; y[1] = p[3]
        x[2] = val[f, b, "median_ms"]; y[2] = val[f, v, "median_ms"]
        for (k = 1; k <= 2; k++) {
            cell[k] = cell[k] (i > 1 ? ", " : "") sprintf((k == 1) ? "%s against %s%s at %s (%s)" : "%.4f against %.4f%s at %s (%s)", \
                x[k], y[k], (i == 1) ? " ms" : "", ((i == 1) ? "n = " : "") count(p[1]), compared(x[k], y[k], rel))
            r = rel == "overhead" ? 100 * (y[k] / x[k] - 1) : x[k] / y[k]
            if (i == 1 || r < lo[k]) lo[k] = r
            if (i == 1 || r > hi[k]) hi[k] = r
        }
    }
}

END {
    print "@@ claims"

    # C11: the cost of a launch. At n = 1K the bytes take nanoseconds, so the time of each softmax
    # is its launches; multipass makes more of them than naive in the same run.
    f = primary "/02_multipass"
    nv = find(f, "timing", "naive", "cols=1000"); mp = find(f, "timing", "multipass", "cols=1000")
    extra = val[f, mp, "launches"] - val[f, nv, "launches"]
    per_launch = (val[f, mp, "median_ms"] - val[f, nv, "median_ms"]) / extra
    # The claim's 10 and 20 µs over the cost per launch as the row prints it (2.1 µs), each rounded to
    # the nearest whole number, so that the factors follow from the figures the reader sees.
    shown_us = sprintf("%.1f", 1000 * per_launch) + 0
    printf "| <a id=\"c11\"></a>C11 | A kernel launch costs 0.01–0.02 ms (10–20 µs), so every launch a softmax saves is worth that much | at n = 1K (%s): naive, %d launches, %s; multipass, %d launches, %s: %s for each extra launch, the small reductions' work included | %s |\n", \
        f, val[f, nv, "launches"], us(val[f, nv, "median_ms"]), val[f, mp, "launches"], us(val[f, mp, "median_ms"]), us(per_launch), \
        (shown_us < 10) ? "refuted: a launch queued behind others costs " sprintf("%.0f", 10 / shown_us) "–" sprintf("%.0f", 20 / shown_us) "× less here; the whole two-launch softmax takes less than the claimed cost of one launch" : "confirmed"

    # C12: shuffles instead of the tree's last steps, in the fused three-kernel softmax.
    f = primary "/04_warp"
    cells = ""; low = 1e9
    split("1000000 10000000 100000000", ns, " "); split("1M 10M 100M", names, " ")
    for (i = 1; i <= 3; i++) {
        base = find(f, "timing", "fused", "cols=" ns[i]); w = find(f, "timing", "fused_warp", "cols=" ns[i])
        gain = 100 * (val[f, base, "median_ms"] / val[f, w, "median_ms"] - 1)
        if (gain < low) low = gain
        cells = cells (i > 1 ? ", " : "") sprintf("%+.0f %% at n = %s", gain, names[i])
    }
    printf "| <a id=\"c12\"></a>C12 | Warp shuffles in place of the last steps of the fused three-kernel softmax's shared-memory reductions make it another 8–10 %% faster | fused_warp against fused, same bytes (%s): %s | %s |\n", \
        f, cells, (low >= 8) ? "exceeded: the claim replaced only the tree's last steps; fused_warp reduces each warp's 32 values in registers and passes the block one shared array of 32 warp results with two barriers, where the tree stores, loads and waits at a barrier at each of its 8 steps" : "not reproduced"

    # C14, C15: one token, and a batch. The bytes of one row take well under a microsecond at the
    # read ceiling, so one row's time is the launch and the latency of its loads.
    f = primary "/06_fused_topk"
    one = find(f, "batch1", "fast", "cols=50257 k=50")
    ceiling = val[f, one, "ceiling_gbps"]
    printf "| <a id=\"c14\"></a>C14 | The fused softmax + top-K of one token (V ≈ 50,000, K = 50) takes 5–10 µs of kernel time | fast on 1 × 50257, K = 50 (%s): %s by events, launch included; its %.0f KB take %.2f µs at the read ceiling | %s |\n", \
        f, us(val[f, one, "median_ms"]), val[f, one, "bytes_per_row"] / 1000, val[f, one, "bytes_per_row"] / ceiling / 1000, \
        (val[f, one, "median_ms"] <= 0.010) ? "confirmed; the time is the launch and one row's load latency, not its bytes" : "not reproduced"
    b = find(f, "workload", "fast", "k=50")
    rate = val[f, b, "rows"] / val[f, b, "median_ms"] / 1000
    # The claimed 100 and 200 million tokens a second: over the rate measured (as printed), and the
    # bandwidth they would take to read each row's logits once (the row's bytes at V = 50257), in TB/s.
    shown_rate = sprintf("%.1f", rate) + 0
    printf "| <a id=\"c15\"></a>C15 | A batch of 1,024 tokens takes 5–10 ms: 100–200 million tokens a second | fast on %d × 50257, K = 50 (%s): %.3f ms, %.1f million rows a second (%.3f ms per 1,024 rows at that rate) | refuted: a batch's rows run side by side, so 1,024 rows take far less than 1,024 times one; the claim's two figures also disagree (5–10 ms for 1,024 tokens is 0.1–0.2 million a second); and its 100–200 million a second is %.0f–%.0f× the rate measured here and would need %.0f–%.0f TB/s of logits read at V = 50257 (%.0f KB a row), against a read ceiling of %.1f TB/s |\n", \
        val[f, b, "rows"], f, val[f, b, "median_ms"], rate, 1024 / rate / 1000, \
        100 / shown_rate, 200 / shown_rate, 100e6 * val[f, b, "bytes_per_row"] / 1e12, 200e6 * val[f, b, "bytes_per_row"] / 1e12, \
        val[f, b, "bytes_per_row"] / 1000, val[f, b, "ceiling_gbps"] / 1000

    # C16: what one block of fused asks of an SM, from Nsight Compute. A block's resident limit is
    # the smallest of its Block Limit lines; each warp is one row.
    read_ncu("plots/data/h100-sxm/ncu_06_fused.log")
    blocks = 1e9
    split("Registers,Shared Mem,Warps,SM,Barriers", limits, ",")
    for (i = 1; i <= 5; i++) if (ncu["Block Limit " limits[i]] + 0 < blocks) { blocks = ncu["Block Limit " limits[i]] + 0; by = limits[i] }
    by = (by == "Registers") ? "registers" : (by == "Shared Mem") ? "shared memory" : (by == "Warps") ? "warps" : "blocks"
    rows_per_block = ncu["Block Size"] / 32
    printf "| <a id=\"c16\"></a>C16 | The fused kernel (a warp per row, a sorted array per lane) is light: about 26 registers a thread and 2 KB of shared memory for a block of 256 threads, so 16–20 blocks (128–160 rows) are resident on each SM of an A100 | Nsight Compute on fused, 8192 × 50257, K = 10 (%s): %d registers a thread, blocks of %d threads (%d rows), %d bytes of shared memory a block (and %s KB the driver reserves), at most %d blocks (%d rows) an SM, limited by %s; occupancy %s %% in theory, %s %% achieved | not reproduced: its K candidates (10, held as %s) live in registers, and %s limit it to %d rows an SM; an A100 is not testable here |\n", \
        ncu["GPU"], ncu["Registers Per Thread"], ncu["Block Size"], rows_per_block, \
        ncu["Static Shared Memory Per Block"] + ncu["Dynamic Shared Memory Per Block"], ncu["Driver Shared Memory Per Block"], \
        blocks, blocks * rows_per_block, by, ncu["Theoretical Occupancy"], ncu["Achieved Occupancy"], ncu["template"], by, \
        blocks * rows_per_block

    # C17: low arithmetic intensity makes a kernel bandwidth-bound only if its instructions keep up.
    fa = find(f, "workload", "fast", "k=10"); fu = find(f, "workload", "fused", "k=10")
    printf "| <a id=\"c17\"></a>C17 | The fused softmax + top-K does about 0.8 FLOP per byte it reads (1.5 by another count in the same text), far below the 9.6 FLOP per byte where an A100 stops being limited by memory, so its time is the time to read the logits | 8192 × 50257, K = 10 (%s): fast reads at %.1f %% of the read ceiling; fused, the design the claim describes (a sorted array per lane), at %.1f %% | confirmed for fast; not for the claim's own design, whose per-element insertions, not its bytes, set its time: a low intensity bounds the arithmetic, not the instructions around it |\n", \
        f, val[f, fa, "pct_ceiling"], val[f, fu, "pct_ceiling"]

    # C18: a sorted register array against a heap, for K <= 32.
    printf "| <a id=\"c18\"></a>C18 | For K ≤ 32, a sorted array in each lane's registers is faster than a binary heap: no pointer chasing, predictable branches, registers rather than shared memory | no heap was built here. What was measured (8192 × 50257, K = 10, %s): the sorted array (fused) takes %.3f ms; fast, which keeps no per-lane list (a threshold drops almost every logit before any insertion), %.3f ms, %s faster | not tested: a heap's sift-down indexes its array with a run-time position, which puts the array in local memory, not registers, so the claim is plausible; but the choice that decides the time is filtering before inserting, not the list's shape |\n", \
        f, val[f, fu, "median_ms"], val[f, fa, "median_ms"], speedup(fu, fa, f)

    # C19: one lane per row, as tensor memory lays rows out; stage 04's thread_per_row maps rows the same way.
    f = primary "/04_warp"
    t32 = find(f, "rows_sweep", "thread_per_row", "cols=32"); w32 = find(f, "rows_sweep", "warp_per_row", "cols=32")
    t1k = find(f, "rows_sweep", "thread_per_row", "cols=1024"); w1k = find(f, "rows_sweep", "warp_per_row", "cols=1024")
    printf "| <a id=\"c19\"></a>C19 | On Blackwell, a softmax of many rows can take its scores from tensor memory one row per lane (the 32x32b.x8 load: lane i reads row i), and is right in all 72 configurations tried (cosine similarity ≥ 0.999996 against a reference) | not testable here: tensor memory needs sm_100, this GPU is sm_90. The same mapping in registers is stage 04's thread_per_row: warp_per_row is %s faster at 32 columns and %s at 1024 (%s), since a thread per row reads memory with a stride of a row | not testable here; a cosine of 0.999996 would also pass outputs this course's check fails, since a relative error on a row's small probabilities barely moves it |\n", \
        speedup(t32, w32, f), speedup(t1k, w1k, f), f

    # C13: the stable fused softmax against the unstable naive one, timed in one run of stage 03 (the
    # primary GPU's, or else the H100's), at the size the claim names.
    f = has(primary "/03_fused3kernel") ? primary "/03_fused3kernel" : "h100-sxm/03_fused3kernel"
    if (has(f) && (nv = lookup(f, "timing", "naive", "cols=1000000"))) {
        sb = find(f, "timing", "single_block_merge", "cols=1000000"); fu = find(f, "timing", "fused", "cols=1000000")
        faster = val[f, sb, "median_ms"] < val[f, nv, "median_ms"] || val[f, fu, "median_ms"] < val[f, nv, "median_ms"]
        printf "| <a id=\"c13\"></a>C13 | At n = 1M the fused three-kernel softmax (single-block merge) is faster than the naive one while staying stable: 0.173 ms against 0.190 ms on an H100 PCIe | on the %s (%s), n = 1M: naive %.4f ms, single_block_merge %.4f ms, fused (the merge over many blocks) %.4f ms | %s |\n", \
            gpu_name(meta[f, "gpu"]), f, val[f, nv, "median_ms"], val[f, sb, "median_ms"], val[f, fu, "median_ms"], \
            faster ? "confirmed" : sprintf("refuted here: naive, with 2 launches, no trees and 12 bytes, is %.2f× faster than the faster fused version (of the stable softmaxes, stage 05's online overtakes naive at large n)", \
                ((val[f, sb, "median_ms"] < val[f, fu, "median_ms"]) ? val[f, sb, "median_ms"] : val[f, fu, "median_ms"]) / val[f, nv, "median_ms"])
    }

    # C23, C24: the bytes of a softmax followed by a sort, and how the speedup over that path grows
    # with V.
    f = primary "/06_fused_topk"
    un = find(f, "workload", "unfused", "k=10"); fu = find(f, "workload", "fused", "k=10"); fa = find(f, "workload", "fast", "k=10")
    # Against the claim's 4x: the sort-based path's bytes over fused's (a lower bound), and PyTorch's,
    # whose top-K selects without sorting the row (C7), where torch_topk.py added its rows.
    sorted_x = val[f, un, "bytes_per_row"] / val[f, fu, "bytes_per_row"]
    pt = lookup(f, "workload", "torch", "k=10")
    printf "| <a id=\"c23\"></a>C23 | A softmax written out, then sorted to take its top K, moves 4× the bytes of a fused kernel: 800 KB against 200 KB a row at V = 50,000 (read the logits, write the probabilities, read them to sort, write the sorted indices) | 8192 × 50257, K = 10 (%s): this course's unfused path (stage 05's row softmax, CUB's segmented sort of the logits and their indices, the first K copied) %.0f KB a row, counted as a lower bound, against fused's %.0f KB: %.1f× | %s%s |\n", \
        f, val[f, un, "bytes_per_row"] / 1000, val[f, fu, "bytes_per_row"] / 1000, sorted_x, \
        (sprintf("%.1f", sorted_x) + 0 > 4) ? sprintf("the claim's count is too low for a sort-based path: a sort moves indices as well as keys, in and out, so even a lower bound is %.1f×", sorted_x) : "confirmed", \
        pt ? sprintf("; a top-K that does not sort the row moves %.1f× (PyTorch's, [C7](#c7))", val[f, pt, "bytes_per_row"] / val[f, fu, "bytes_per_row"]) : ""
    cells = ""
    split("50257 128256 262144", vs, " ")
    for (i = 1; i <= 3; i++) {
        a = find(f, "batch1", "unfused", "cols=" vs[i] " k=50"); b = find(f, "batch1", "fast", "cols=" vs[i] " k=50")
        cells = cells (i > 1 ? ", " : "") sprintf("%s at V = %s", speedup(a, b, f), vs[i])
    }
    printf "| <a id=\"c24\"></a>C24 | The fused kernel's speedup over the softmax-then-sort path grows with the vocabulary: 3–4× at V = 10,000, 4–5× at V = 50,000 and at 500,000 | %s: 8192 rows of 50257, K = 10: fused %s, fast %s; one row, K = 50: fast %s | not tested at V = 10,000 or 500,000; where measured the speedup is larger than claimed, and on one row it grows with V: fast's time there is mostly its launch and one row's latency, while the unfused path's grows with the row |\n", \
        f, speedup(un, fu, f), speedup(un, fa, f), cells

    # C20-C22: a published run on an H100 PCIe, beside our H100's runs of the same experiments. The
    # cards differ (PCIe against SXM, with less bandwidth) and so does the code: their times and
    # ours stand side by side, and the verdicts compare the ratios.
    f = "h100-sxm/02_multipass"
    if (has(f)) {
        nv = find(f, "stability", "naive", "lo=500"); mp = find(f, "stability", "multipass", "lo=500")
        printf "| <a id=\"c20\"></a>C20 | A published run on an H100 PCIe: softmax as exp(x) / Σ exp(x) gives NaN everywhere on inputs in [500, 1000], where the multi-pass softmax is right | on the %s (%s), n = %s: naive %s of %s outputs NaN/Inf (%s), multipass %s (max relative error %.1e) | %s |\n", \
            gpu_name(meta[f, "gpu"]), f, count(val[f, nv, "cols"]), val[f, nv, "nonfinite"], val[f, nv, "cols"], val[f, nv, "result"], \
            val[f, mp, "result"], val[f, mp, "max_rel_err"], \
            (val[f, nv, "nonfinite"] == val[f, nv, "cols"] && val[f, mp, "result"] == "PASS") ? "confirmed" : "not reproduced"
        beside("1000:0.035:0.060 10000:0.039:0.060 100000:0.047:0.083 1000000:0.190:0.367 10000000:0.260:0.477", f, "naive", "multipass", "overhead")
        printf "| <a id=\"c21\"></a>C21 | A published run on an H100 PCIe, naive against multi-pass (median ms): %s | on the %s (%s): %s | %s |\n", \
            cell[1], gpu_name(meta[f, "gpu"]), f, cell[2], \
            (lo[2] <= 0 ? "not reproduced: multipass is not slower at every size here" : \
             sprintf("confirmed: multipass is slower at every size on both; its overhead is %+.0f %% to %+.0f %% here, %+.0f %% to %+.0f %% there", lo[2], hi[2], lo[1], hi[1]))
    }
    f = "h100-sxm/03_fused3kernel"
    if (has(f)) {
        beside("100000:0.088:0.032 1000000:0.372:0.173 10000000:0.494:0.355 100000000:1.658:2.557", f, "multipass", "single_block_merge", "speedup")
        last = find(f, "timing", "single_block_merge", "cols=100000000")
        printf "| <a id=\"c22\"></a>C22 | A published run on an H100 PCIe, multi-pass against the fused three-kernel softmax with a single-block merge (ms): %s | on the %s (%s): %s | %s |\n", \
            cell[1], gpu_name(meta[f, "gpu"]), f, cell[2], \
            (val[f, last, "baseline_ms"] / val[f, last, "median_ms"] < 1 ? "confirmed: the single-block merge is slower than multipass at n = 100M on both" : "not reproduced: here the single-block merge is still faster at n = 100M") \
            sprintf("; its speedup spans %.2f× to %.2f× here, %.2f× to %.2f× there", lo[2], hi[2], lo[1], hi[1])
    }

    # The line under the table: every run it read (the primary GPU's first), its date, and its code
    # and sources as common.awk's provenance line says them; runs alike in those are listed together.
    ngroups = 0
    for (f in ncols) names[++nnames] = f
    for (i = 1; i <= nnames; i++)
        for (j = i + 1; j <= nnames; j++)
            if (run_order(names[j]) < run_order(names[i])) { t = names[i]; names[i] = names[j]; names[j] = t }
    for (i = 1; i <= nnames; i++) {
        f = names[i]
        said = run_said("", meta[f, "code"], meta[f, "sources"], stage_of(f))
        sub(/^, /, "", said)
        if (!(said in group)) { group[said] = ""; group_order[++ngroups] = said }
        group[said] = group[said] (group[said] == "" ? "" : ", ") f " " meta[f, "date"]
    }
    line = ""
    for (i = 1; i <= ngroups; i++) line = line (i > 1 ? "; " : "") group[group_order[i]] ", " group_order[i]
    print "*Runs the rows read: " line ".*"
}
