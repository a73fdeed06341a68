#!/usr/bin/env python3
"""graph_ops.py: the time of a small kernel replayed from a CUDA graph.

Each of a decode step's small kernels (a residual add, an RMSNorm, SiLU
and multiply) on 1, 16 and 64 tokens of Llama 3 70B's width (hidden
8192, the MLP's 7168 columns of one rank of four), 500 of them captured
back to back in one CUDA graph, the graph replayed between CUDA events:
the time per kernel. The CUDA suite's launch_graph row (kernels/launch.cu)
gives an empty kernel's. Written for sim.GraphLaunch, which prices what a
kernel of a graphed decode step pays beyond its work.

  part,tokens,kernels,time_per_kernel_s,time_min_s,reps
"""
import torch
import torch.nn.functional as F

DT, DEV, N = torch.bfloat16, "cuda", 500


def per_kernel(fn, kernels, reps=21):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(N):
            fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3 / (N * kernels))
    ts.sort()
    return ts[len(ts) // 2], ts[0], len(ts)


def main():
    p = torch.cuda.get_device_properties(0)
    print(f"# {p.name}, torch {torch.__version__}, {N} repetitions a graph", flush=True)
    print("part,tokens,kernels,time_per_kernel_s,time_min_s,reps", flush=True)
    for t in (1, 16, 64):
        x = torch.randn(t, 8192, device=DEV, dtype=DT)
        y = torch.randn(t, 8192, device=DEV, dtype=DT)
        w = torch.ones(8192, device=DEV, dtype=DT)
        gu = torch.randn(t, 2 * 7168, device=DEV, dtype=DT)
        for part, fn, k in (
            ("add", lambda: x.add_(y), 1),
            ("rms_norm", lambda: F.rms_norm(x, (8192,), w), 1),
            ("silu_mul", lambda: F.silu(gu[:, :7168]) * gu[:, 7168:], 2),
        ):
            m, lo, n = per_kernel(fn, k)
            print(f"{part},{t},{k},{m:.4g},{lo:.4g},{n}", flush=True)


if __name__ == "__main__":
    main()
