#!/usr/bin/env python3
"""llama_decode.py: times one tensor-parallel rank's decode step of Llama 3 70B on one GPU.

The rank's shard of Llama 3 70B at --tp (meta-llama/Meta-Llama-3-70B
config.json: hidden 8192, intermediate 28672, 80 layers, 64 query and 8
key/value heads of 128, vocabulary 128256), random bf16 weights, a KV
cache of --context tokens per sequence, every step captured in a CUDA
graph so that no host launch cost is timed. The all-reduces are left out
(one GPU has no peers): what is timed is the rank's own kernels. Written
for perfsim's issue 11, whose vLLM 0.6 rows (Llama 3.1 70B on four H100s)
are predicted 19-23% fast at the median TPOT; docs/serving.md says what
perfsim's step holds.

It prints CSV on stdout, one row per timing:

  part,tp,batch,context,time_s,time_min_s,reps

part "step": the whole step without its all-reduces (RMSNorms, QKV, a
rotary embedding, the KV write, attention by PyTorch's
scaled_dot_product_attention, O, residual adds, gate and up as one GEMM,
SiLU and multiply, down, the final norm and the LM head shard); "gemms":
its GEMMs alone (the four projections a layer and the LM head);
"attention": its attention kernels alone.

  python3 kernels/torch/llama_decode.py > llama70b_tp4_h100.csv
"""
import argparse
import sys
import traceback

import torch
import torch.nn.functional as F

H, FF, LAYERS, NH, NKV, HD, VOCAB = 8192, 28672, 80, 64, 8, 128, 128256
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--layers", type=int, default=LAYERS)
    ap.add_argument("--batches", default="1,16,32")
    ap.add_argument("--contexts", default="512,1024")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    tp, layers = a.tp, a.layers
    nh, nkv, ff, vocab = NH // tp, max(1, NKV // tp), FF // tp, (VOCAB + tp - 1) // tp
    torch.manual_seed(1)
    p = torch.cuda.get_device_properties(0)
    print(f"# {p.name}, {p.multi_processor_count} SMs, torch {torch.__version__}, Llama 3 70B at tp {tp}: {layers} layers, "
          f"{nh} query and {nkv} key/value heads, ffn {ff}, LM head {vocab} rows", flush=True)
    print("part,tp,batch,context,time_s,time_min_s,reps", flush=True)

    wqkv = [weights(((nh + 2 * nkv) * HD, H)) for _ in range(layers)]
    wo = [weights((H, nh * HD)) for _ in range(layers)]
    wgu = [weights((2 * ff, H)) for _ in range(layers)]
    wd = [weights((H, ff)) for _ in range(layers)]
    n1 = [torch.ones(H, device=DEV, dtype=DT) for _ in range(layers)]
    n2 = [torch.ones(H, device=DEV, dtype=DT) for _ in range(layers)]
    nf = torch.ones(H, device=DEV, dtype=DT)
    lm = weights((vocab, H))

    for ctx in [int(c) for c in a.contexts.split(",")]:
        for batch in [int(b) for b in a.batches.split(",")]:
            kc = [weights((batch, nkv, ctx, HD)) for _ in range(layers)]
            vc = [weights((batch, nkv, ctx, HD)) for _ in range(layers)]
            pos = torch.tensor([ctx - 1], device=DEV)
            cos = weights((1, HD))
            sin = weights((1, HD))
            h0 = weights((batch, H))
            hb = torch.empty_like(h0)
            x = weights((batch, H))
            q0 = weights((batch, nh, 1, HD))
            act = weights((batch, ff))

            def rope(t):
                return t * cos + torch.cat([-t[..., HD // 2:], t[..., :HD // 2]], dim=-1) * sin

            def step():
                hb.copy_(h0)
                for li in range(layers):
                    y = F.rms_norm(hb, (H,), n1[li])
                    qkv = y @ wqkv[li].t()
                    q, k, v = qkv.split([nh * HD, nkv * HD, nkv * HD], dim=1)
                    q = rope(q.reshape(batch, nh, 1, HD))
                    k = rope(k.reshape(batch, nkv, 1, HD))
                    kc[li].index_copy_(2, pos, k)
                    vc[li].index_copy_(2, pos, v.reshape(batch, nkv, 1, HD))
                    o = F.scaled_dot_product_attention(q, kc[li], vc[li], enable_gqa=True)
                    hb.add_(o.reshape(batch, nh * HD) @ wo[li].t())
                    y = F.rms_norm(hb, (H,), n2[li])
                    gu = y @ wgu[li].t()
                    hb.add_((F.silu(gu[:, :ff]) * gu[:, ff:]) @ wd[li].t())
                F.rms_norm(hb, (H,), nf) @ lm.t()

            def gemms():
                for li in range(layers):
                    x @ wqkv[li].t()
                    act[:, : nh * HD] @ wo[li].t()
                    x @ wgu[li].t()
                    act @ wd[li].t()
                x @ lm.t()

            def attention():
                for li in range(layers):
                    F.scaled_dot_product_attention(q0, kc[li], vc[li], enable_gqa=True)

            for part, fn in (("step", step), ("gemms", gemms), ("attention", attention)):
                try:
                    t, tmin, n = timed(fn, a.reps)
                    print(f"{part},{tp},{batch},{ctx},{t:.6g},{tmin:.6g},{n}", flush=True)
                except Exception:
                    print(f"# {part} batch {batch} context {ctx} failed:", file=sys.stderr)
                    traceback.print_exc()
            del kc, vc
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
