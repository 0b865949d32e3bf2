#!/usr/bin/env python3
"""What a framework does, measured beside the C program: torch.topk(torch.softmax(x), k), and
PyTorch's usual sampler for the `sample` rows.

Optional; the C program never needs it. It reads a CSV that ./run wrote, rebuilds the exact logits
of every `unfused` row, every `fast` row of the batch sweep and the decode loop's from the row's seed
(the same generator as common/inputs.c), runs PyTorch on them, checks the answer against an fp64
top-K with the course's tie rule (ties to the lower index), times it the way the C program does
(CUDA events, L2 flushed before each run, median), and appends a `torch` row for each to the same
CSV, against the ceiling that run measured. The decode loop's row is PyTorch in the same loop: one
topk(softmax) a token, each on its own row, the N steps captured in one torch.cuda.CUDAGraph.

For each `sample` row of `fast` (a token a row drawn from the top K, T and top-p as the default run
sets them: --temperature, --top-p) it does the same for the sampler a PyTorch serving loop writes:
divide by T, topk, softmax, cumsum, the top-p mask, torch.multinomial. Its draws come from another
generator, so they cannot be compared token by token: each token must lie in the row's kept set
(the fp64 top-K cut by top-p), one outside counting as an index error, and their ranks summed must
lie near what the kept distributions give (Bernstein's bound on the distance at least 1e-9).
(FlashInfer's sampler is measured by the C program itself, built from its headers:
library/flashinfer_draw.cu.)

    ./run --csv results.csv && python3 torch_topk.py --csv results.csv
"""
import argparse
import sys
import warnings

import numpy as np

VERIFY_RTOL, VERIFY_ATOL = 1e-4, 1e-30  # common/verify.h
SIZES = {"float32": 4, "bf16": 2, "fp16": 2}


def fail(message):
    print(f"torch_topk.py: {message}", file=sys.stderr)
    sys.exit(2)


def uniform_logits(seed, n, lo, hi, chunk=1 << 24):
    """common/inputs.c's splitmix64 stream as float32 uniform in [lo, hi): element i is drawn from
    state seed + (i + 1) * golden, so the stream is computed in chunks, all at once."""
    golden, c1, c2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    out = np.empty(n, dtype=np.float32)
    with np.errstate(over="ignore"):
        for start in range(0, n, chunk):
            z = np.uint64(seed) + (np.arange(start, min(n, start + chunk), dtype=np.uint64) + np.uint64(1)) * golden
            z = (z ^ (z >> np.uint64(30))) * c1
            z = (z ^ (z >> np.uint64(27))) * c2
            z ^= z >> np.uint64(31)
            unit = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
            out[start:start + chunk] = (lo + (hi - lo) * unit).astype(np.float32)
    return out


def read_csv(path):
    header, rows, columns = [], [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                header.append(line)
            elif columns is None:
                columns = line.split(",")
            elif line:
                rows.append(dict(zip(columns, line.split(","))))
    if columns is None or "variant" not in columns:
        fail(f"{path} is not a CSV written by 06_fused_topk/run --csv")
    ceiling = [h for h in header if h.startswith("# ceiling: read")]
    if not ceiling:
        fail(f"{path} has no '# ceiling: read' line")
    # "# ceiling: read (16-byte loads), fastest run 4403.5 GB/s; ...": the number before the first GB/s
    return columns, rows, float(ceiling[0].split(" GB/s")[0].split()[-1])


def count_launches(torch, run):
    """The CUDA kernels one call of run() launches."""
    with warnings.catch_warnings():  # the profiler warns that it keeps one cycle's events: one is all we want
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            run()
            torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def time_runs(torch, run, flush, args):
    """The C program's timing: --warmup runs at a time until they have taken 100 ms of GPU time,
    then --iters runs, each after an L2 flush, timed by CUDA events; returns their times in ms."""
    warm_start, warm_now = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    warm_start.record()
    while args.warmup > 0:
        for _ in range(args.warmup):
            flush.zero_()
            run()
        warm_now.record()
        warm_now.synchronize()
        if warm_start.elapsed_time(warm_now) >= 100.0:
            break
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
    for i in range(args.iters):
        flush.zero_()
        starts[i].record()
        run()
        stops[i].record()
    torch.cuda.synchronize()
    return np.array([s.elapsed_time(e) for s, e in zip(starts, stops)])


def torch_sampler(torch, x, k, temperature, top_p):
    """The sampler a PyTorch serving loop writes: a token a row, as indices into the row."""
    values, indices = torch.topk(x.float() / temperature, k, dim=-1)
    probs = torch.softmax(values, dim=-1)
    before = probs.cumsum(dim=-1) - probs  # the mass ranked above each token
    probs = probs.masked_fill(before >= top_p, 0.0)  # keep up to the token that reaches top_p
    return indices.gather(-1, torch.multinomial(probs, 1)).squeeze(-1)


def sample_rows(torch, rows, flush, ceiling_gbps, args):
    """A `torch` row for every `sample` row of fast."""
    torch_dtype = {"float32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    t, top_p = args.temperature, args.top_p
    out_rows = []
    for r in rows:
        if r["experiment"] != "sample" or r["variant"] != "fast" or r["dist"] != "uniform":
            continue
        n_rows, cols, k = int(r["rows"]), int(r["cols"]), int(r["k"])
        x32 = uniform_logits(int(r["seed"]), n_rows * cols, float(r["lo"]), float(r["hi"]))
        x = torch.from_numpy(x32).view(n_rows, cols).cuda().to(torch_dtype[r["dtype"]])
        # The kept set in fp64: the top K (ties to the lower index), cut at the first place whose
        # cumulative weight reaches top_p of their total.
        xd = x.double()
        order = torch.sort(xd, dim=1, descending=True, stable=True).indices[:, :k]
        w = torch.exp((xd.gather(1, order) - xd.gather(1, order[:, :1])) / t)
        cum = w.cumsum(dim=1)
        kept = (cum < top_p * cum[:, -1:]).sum(dim=1, keepdim=True) + 1 if top_p < 1 else torch.full_like(cum[:, :1], k)
        def run():
            return torch_sampler(torch, x, k, t, top_p)
        tokens = run().long().view(n_rows, 1)
        rank = torch.where(order == tokens, torch.arange(k, device=x.device), k).min(dim=1, keepdim=True).values
        index_errors = int((rank >= kept).sum())
        # The summed rank near its expectation under the kept distributions: Bernstein's bound on
        # its distance at least 1e-9 (host/draw_reference.h: verify_draw_by_rule, DRAW_RANK_P).
        ranks = torch.arange(k, device=x.device, dtype=torch.float64).view(1, -1)
        p = torch.where(ranks < kept, w, 0.0)
        p = p / p.sum(dim=1, keepdim=True)
        mean = (p * ranks).sum(dim=1)
        variance = float(((p * ranks ** 2).sum(dim=1) - mean ** 2).sum())
        reach = float(torch.maximum(mean, kept.squeeze(1) - mean).max())
        t = abs(float(rank.double().sum() - mean.sum()))
        bound = min(1.0, 2 * np.exp(-t * t / (2 * (variance + reach * t / 3)))) if t > 0 else 1.0
        launches = count_launches(torch, run)
        ms = time_runs(torch, run, flush, args)
        median = float(np.median(ms))
        gbps = n_rows * cols * SIZES[r["dtype"]] / (median * 1e-3) / 1e9
        ok = index_errors == 0 and bound >= 1e-9
        out_rows.append(dict(r, variant="torch", median_ms=f"{median:.6f}", min_ms=f"{ms.min():.6f}",
                             max_ms=f"{ms.max():.6f}", gbps=f"{gbps:.1f}",
                             pct_ceiling=f"{100 * gbps / ceiling_gbps:.2f}", ceiling_gbps=f"{ceiling_gbps:.1f}",
                             bytes_per_row=f"{cols * (SIZES[r['dtype']] + 8) + 8 * k}",  # x / T written, read
                             launches=f"{launches}", index_errors=f"{index_errors}", max_abs_err="nan",
                             max_rel_err="nan", nonfinite="0", result="PASS" if ok else "FAIL", baseline="fast",
                             baseline_ms=r["median_ms"]))
        shape = f"{n_rows}x{cols}" if n_rows > 1 else f"{cols}"
        print(f"{shape:>12} {r['dtype']:7} {k:>5}  {'torch':10} {median:9.4f} {gbps:6.0f} "
              f"{100 * gbps / ceiling_gbps:6.1f}% {index_errors:8d}  {'PASS' if ok else 'FAIL'}  "
              f"{float(r['median_ms']) / median:6.2f}x (sample)")
    return out_rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--csv", required=True, help="a CSV written by 06_fused_topk/run --csv; torch rows are appended")
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--temperature", type=float, default=0.8, help="the sample rows' T (the default run's)")
    parser.add_argument("--top-p", type=float, default=0.9, help="the sample rows' top-p (the default run's)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        fail(f"PyTorch is not importable ({e}); the C program does not need it")
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA device")

    columns, rows, ceiling_gbps = read_csv(args.csv)
    torch_dtype = {"float32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    cache = {}
    out_rows = []
    print(f"{'rows x V':>12} {'dtype':7} {'K':>5}  variant  median ms   GB/s  % read  idx err  check  speedup")
    # The rows PyTorch measures: one per case of the C program's own baseline, and fast's rows of the
    # experiments that only fast runs. Only the uniform generator is rebuilt here.
    sources = [r for r in rows if r["dist"] == "uniform" and (
        r["variant"] == "unfused" or (r["variant"] == "fast" and r["experiment"] in ("batch_sweep", "decode_loop")))]
    # The batch sweep's rows are prefixes of one case: the generator draws element i from the seed and
    # i alone, so the case is drawn once with the most rows any of them has, and each takes its rows.
    case_of = lambda r: (r["seed"], r["cols"], r["lo"], r["hi"], r["dtype"])
    most_rows = {}
    for r in sources:
        most_rows[case_of(r)] = max(most_rows.get(case_of(r), 0), int(r["rows"]))
    for r in sources:
        n_rows, cols, k = int(r["rows"]), int(r["cols"]), int(r["k"])
        key = case_of(r)
        if key not in cache:
            cache.clear()  # one case at a time: 8192 x 128256 logits are 4.2 GB
            drawn = most_rows[key]
            x32 = uniform_logits(int(r["seed"]), drawn * cols, float(r["lo"]), float(r["hi"]))
            x = torch.from_numpy(x32).view(drawn, cols).cuda().to(torch_dtype[r["dtype"]])
            del x32
            xd = x.double()  # the logits as the kernels see them, widened exactly
            m = xd.max(dim=1, keepdim=True).values
            d = torch.exp(xd - m).sum(dim=1, keepdim=True)
            deepest = max(int(o["k"]) for o in sources if case_of(o) == key)
            order = torch.cat([torch.sort(xd[i:i + 256], dim=1, descending=True, stable=True).indices[:, :deepest]
                               for i in range(0, drawn, 256)])  # ties: lower index first; 256 rows at a time
            cache[key] = (x, xd, m, d, order)
        x, xd, m, d, order = (t[:n_rows] for t in cache[key])
        decode = r["experiment"] == "decode_loop"

        if decode:
            # N steps, token t on row t alone, captured in one graph; its outputs are the tensors the
            # capture made, which every replay writes again.
            x_rows = [x[t:t + 1] for t in range(n_rows)]
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # the allocator's warm-up, outside the capture
                for t in range(3):
                    torch.topk(torch.softmax(x_rows[t], dim=-1, dtype=torch.float32), k, dim=-1)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                steps = [torch.topk(torch.softmax(xr, dim=-1, dtype=torch.float32), k, dim=-1) for xr in x_rows]

            def run():
                graph.replay()
                return torch.cat([p for p, _ in steps]), torch.cat([i for _, i in steps])
        else:
            def run():
                return torch.topk(torch.softmax(x, dim=-1, dtype=torch.float32), k, dim=-1)

        probs, idx = run()
        ref_idx = order[:, :k]
        ref_prob = torch.exp(xd.gather(1, ref_idx) - m) / d
        index_errors = int((idx != ref_idx).sum())
        p = probs.double()
        finite = torch.isfinite(p)
        abs_err = (p - ref_prob).abs()
        prob_failures = int((~finite | (abs_err > VERIFY_RTOL * ref_prob.abs() + VERIFY_ATOL)).sum())
        measured = finite & (ref_prob.abs() >= VERIFY_ATOL)  # where a relative error means something
        rel = abs_err[measured] / ref_prob.abs()[measured]
        nonfinite = int((~finite).sum())
        max_abs = float("nan") if nonfinite else float(abs_err.max())
        max_rel = float("nan") if nonfinite else float(rel.max()) if rel.numel() else 0.0

        if decode:
            # The profiler sees one graph, not its kernels: the launches of one step, times N.
            launches = n_rows * count_launches(
                torch, lambda: torch.topk(torch.softmax(x_rows[0], dim=-1, dtype=torch.float32), k, dim=-1))
            timed = graph.replay  # the loop alone: the cat that gathers the answer is not part of it
        else:
            launches = count_launches(torch, run)
            timed = run
        ms = time_runs(torch, timed, flush, args)
        median = float(np.median(ms))
        gbps = n_rows * cols * SIZES[r["dtype"]] / (median * 1e-3) / 1e9
        ok = index_errors == 0 and prob_failures == 0
        # A lower bound of its bytes: the logits read, the fp32 softmax written and read again, K pairs.
        bytes_per_row = cols * (SIZES[r["dtype"]] + 8) + 8 * k
        out = dict(r, variant="torch", median_ms=f"{median:.6f}", min_ms=f"{ms.min():.6f}", max_ms=f"{ms.max():.6f}",
                   gbps=f"{gbps:.1f}", pct_ceiling=f"{100 * gbps / ceiling_gbps:.2f}", ceiling_gbps=f"{ceiling_gbps:.1f}",
                   bytes_per_row=f"{bytes_per_row}", launches=f"{launches}", index_errors=f"{index_errors}",
                   max_abs_err=f"{max_abs:.3e}", max_rel_err=f"{max_rel:.3e}", nonfinite=f"{nonfinite}",
                   result="PASS" if ok else "FAIL", baseline=r["variant"], baseline_ms=r["median_ms"])
        out_rows.append(out)
        shape = f"{n_rows}x{cols}" if n_rows > 1 else f"{cols}"
        print(f"{shape:>12} {r['dtype']:7} {k:>5}  torch   {median:9.4f} {gbps:6.0f} {100 * gbps / ceiling_gbps:6.1f}% "
              f"{index_errors:8d}  {'PASS' if ok else 'FAIL'}  {float(r['median_ms']) / median:6.2f}x"
              + (f"  ({r['experiment']}, over {r['variant']}{f'; {1000 * median / n_rows:.2f} us a token' if decode else ''})"
                 if r["variant"] != "unfused" else ""))
        if decode:
            del graph, steps

    out_rows += sample_rows(torch, rows, flush, ceiling_gbps, args)
    with open(args.csv, "a") as f:
        for out in out_rows:
            f.write(",".join(out[c] for c in columns) + "\n")
    print(f"{len(out_rows)} torch rows appended to {args.csv}; FAIL marks where torch's order differs from the "
          "exact one (it ranks rounded fp32 probabilities, see README.md)")


if __name__ == "__main__":
    main()
