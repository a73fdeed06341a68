#!/usr/bin/env python3
"""mixtral_decode.py: times a Mixtral-8x7B-shaped decode step on one GPU.

Random bf16 weights of Mixtral 8x7B's shapes (mistralai/Mixtral-8x7B-v0.1
config.json: hidden 4096, intermediate 14336, 32 layers, 32 query and 8
key/value heads of 128, 8 experts, top-2, vocabulary 32000), a KV cache
of CONTEXT tokens per sequence, every step captured in a CUDA graph so
that no host launch cost is timed. Needs PyTorch with CUDA and about
100 GB of GPU memory (an H200); it was written for perfsim's issue 13,
which asks whether the time of a decode step from batch 1 to batch 4
follows the bytes it moves (2 experts a layer against 8·(1 − 0.75⁴) ≈
5.47 under uniform routing).

It prints CSV on stdout, one row per timing:

  part,impl,batch,experts,time_s,time_min_s,reps

part "moe": one MoE layer (the routed experts alone, four layers' weights
cycled so nothing stays in L2), with `experts` distinct experts among
batch·2 routed tokens; part "step": the whole decode step (norms, QKV, KV
write, attention, O, router, top-2, MoE, LM head), `experts` the mean of
distinct experts a layer under the uniform routing drawn with --seed.
impl "loop" runs one GEMM pair per active expert (as Hugging Face's
Mixtral block does); "grouped" runs torch._grouped_mm over the experts'
token groups (each padded to 16 rows), one launch for all experts.

  python3 kernels/torch/mixtral_decode.py > mixtral_h200.csv
"""
import argparse
import random
import sys
import traceback

import torch
import torch.nn.functional as F

H, FF, LAYERS, NH, NKV, HD, E, TOPK, VOCAB = 4096, 14336, 32, 32, 8, 128, 8, 2, 32000
DT = torch.bfloat16
DEV = "cuda"


def timed(fn, reps, warm=3):
    """Median and minimum of reps replays of fn captured in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(warm):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3)
    ts.sort()
    del g
    return ts[len(ts) // 2], ts[0], len(ts)


def weights(shape):
    return torch.empty(shape, device=DEV, dtype=DT).uniform_(-0.02, 0.02)


class Routing:
    """A fixed routing of batch tokens (TOPK distinct experts each)."""

    def __init__(self, choices, batch):
        self.choices = choices  # per token, its TOPK experts
        self.experts = sorted({e for c in choices for e in c})
        self.loop = []
        for e in self.experts:
            toks = [t for t, c in enumerate(choices) if e in c]
            idx = torch.tensor(toks, device=DEV, dtype=torch.long)
            self.loop.append((e, idx))
        # Grouped: rows sorted by expert, each group padded to 16 rows
        # with a zero row (index batch of the padded input).
        rows, offs, end = [], [], 0
        for e in range(E):
            toks = [t for t, c in enumerate(choices) if e in c]
            if toks:
                n = (len(toks) + 15) // 16 * 16
                rows += toks + [batch] * (n - len(toks))
                end += n
            offs.append(end)
        self.rows = torch.tensor(rows, device=DEV, dtype=torch.long)
        self.offs = torch.tensor(offs, device=DEV, dtype=torch.int32)
        self.w = torch.full((len(rows), 1), 0.5, device=DEV, dtype=DT)


def draw(rng, batch):
    return [rng.sample(range(E), TOPK) for _ in range(batch)]


def with_experts(rng, batch, d):
    """A routing of batch tokens that touches exactly d experts."""
    for _ in range(100000):
        c = draw(rng, batch)
        if len({e for x in c for e in x}) == d:
            return c
    return None


def moe_loop(x, w1, w2, r, out):
    out.zero_()
    for e, idx in r.loop:
        xe = x.index_select(0, idx)
        h = xe @ w1[e].t()
        a = F.silu(h[:, :FF]) * h[:, FF:]
        out.index_add_(0, idx, (a @ w2[e].t()) * 0.5)


def moe_grouped(x, w1, w2, r, out):
    xp = torch.cat([x, x.new_zeros(1, H)])
    xs = xp.index_select(0, r.rows)
    h = torch._grouped_mm(xs, w1.transpose(-2, -1), offs=r.offs)
    a = F.silu(h[:, :FF]) * h[:, FF:]
    y = torch._grouped_mm(a, w2.transpose(-2, -1), offs=r.offs) * r.w
    out.zero_()
    out.index_add_(0, r.rows.clamp(max=x.shape[0] - 1), y * (r.rows < x.shape[0]).unsqueeze(1).to(DT))


IMPLS = {"loop": moe_loop, "grouped": moe_grouped}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--layers", type=int, default=LAYERS, help="decoder layers (16 fits an 80 GB GPU; the step scales with them)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--routings", type=int, default=4, help="batch-4 routings drawn for the step")
    a = ap.parse_args()
    layers = a.layers
    rng = random.Random(a.seed)
    torch.manual_seed(a.seed)
    p = torch.cuda.get_device_properties(0)
    print(f"# {p.name}, {p.multi_processor_count} SMs, torch {torch.__version__}, {layers} layers, context {a.context}", flush=True)
    print("part,impl,batch,experts,time_s,time_min_s,reps", flush=True)

    w1 = [weights((E, 2 * FF, H)) for _ in range(layers)]
    w2 = [weights((E, H, FF)) for _ in range(layers)]

    # Each implementation once outside a graph first: one that fails there
    # is dropped, not captured (a failed capture can spoil later ones).
    impls = {}
    for impl, fn in IMPLS.items():
        try:
            x = weights((4, H))
            out = torch.empty(4, H, device=DEV, dtype=DT)
            fn(x, w1[0], w2[0], Routing(draw(rng, 4), 4), out)
            torch.cuda.synchronize()
            impls[impl] = fn
        except Exception:
            print(f"# {impl}: fails outside a graph, dropped:", file=sys.stderr)
            traceback.print_exc()

    # Part 1: the MoE layer by distinct experts.
    for impl, fn in impls.items():
        for batch in (1, 2, 4):
            x = weights((batch, H))
            out = torch.empty(batch, H, device=DEV, dtype=DT)
            for d in range(TOPK, min(E, batch * TOPK) + 1):
                c = with_experts(rng, batch, d)
                if c is None:
                    continue
                r = Routing(c, batch)
                try:
                    def four():
                        for li in range(4):
                            fn(x, w1[li], w2[li], r, out)
                    t, tmin, n = timed(four, a.reps)
                    print(f"moe,{impl},{batch},{d},{t / 4:.6g},{tmin / 4:.6g},{n}", flush=True)
                except Exception:
                    print(f"# moe {impl} batch {batch} experts {d} failed:", file=sys.stderr)
                    traceback.print_exc()
                    break

    # Part 2: the whole decode step.
    wqkv = [weights(((NH + 2 * NKV) * HD, H)) for _ in range(layers)]
    wo = [weights((H, NH * HD)) for _ in range(layers)]
    wr = [weights((E, H)) for _ in range(layers)]
    n1 = [torch.ones(H, device=DEV, dtype=DT) for _ in range(layers)]
    n2 = [torch.ones(H, device=DEV, dtype=DT) for _ in range(layers)]
    lm = weights((VOCAB, H))
    nf = torch.ones(H, device=DEV, dtype=DT)

    for impl, fn in impls.items():
        for batch in (1, 4):
            kc = [weights((batch, NKV, a.context, HD)) for _ in range(layers)]
            vc = [weights((batch, NKV, a.context, HD)) for _ in range(layers)]
            pos = torch.tensor([a.context - 1], device=DEV)
            h0 = weights((batch, H))
            hbuf = torch.empty_like(h0)
            out = torch.empty(batch, H, device=DEV, dtype=DT)
            routings = 1 if batch == 1 else a.routings
            times, mins, dsum = [], [], 0.0
            try:
                for _ in range(routings):
                    rs = [Routing(draw(rng, batch), batch) for _ in range(layers)]
                    dsum += sum(len(r.experts) for r in rs) / layers

                    def step():
                        hbuf.copy_(h0)
                        for li in range(layers):
                            x = F.rms_norm(hbuf, (H,), n1[li])
                            qkv = x @ wqkv[li].t()
                            q, k, v = qkv.split([NH * HD, NKV * HD, NKV * HD], dim=1)
                            kc[li].index_copy_(2, pos, k.reshape(batch, NKV, 1, HD))
                            vc[li].index_copy_(2, pos, v.reshape(batch, NKV, 1, HD))
                            o = F.scaled_dot_product_attention(q.reshape(batch, NH, 1, HD), kc[li], vc[li], enable_gqa=True)
                            hbuf.add_(o.reshape(batch, NH * HD) @ wo[li].t())
                            x = F.rms_norm(hbuf, (H,), n2[li])
                            torch.topk(torch.softmax((x @ wr[li].t()).float(), dim=-1), TOPK, dim=-1)
                            fn(x, w1[li], w2[li], rs[li], out)
                            hbuf.add_(out)
                        F.rms_norm(hbuf, (H,), nf) @ lm.t()

                    t, tmin, n = timed(step, a.reps)
                    times.append(t)
                    mins.append(tmin)
                print(f"step,{impl},{batch},{dsum / routings:.4g},{sum(times) / len(times):.6g},{min(mins):.6g},{n * routings}", flush=True)
            except Exception:
                print(f"# step {impl} batch {batch} failed:", file=sys.stderr)
                traceback.print_exc()
            del kc, vc


if __name__ == "__main__":
    main()
