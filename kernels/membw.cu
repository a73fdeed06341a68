// membw: times stream kernels over fp32 arrays of 1 MiB to 4 GiB and
// prints one CSV row per kernel and size (schema: README.md):
//   read   s += a[i]            bytes = S
//   write  a[i] = x             bytes = S
//   copy   b[i] = a[i]          bytes = 2·S
//   triad  a[i] = b[i] + x·c[i] bytes = 3·S, flops = 2 per element
// S is the size of one array; bytes count what the kernel must move, as
// STREAM counts it (McCalpin, "Memory Bandwidth and Machine Balance in
// Current High Performance Computers", 1995). The L2 is flushed before
// every repetition, so that small arrays are read from device memory:
// their rows show how bandwidth falls off at small sizes.
#include "common.h"

// Sink of the read kernel: written only when the sum hits a value that
// our data never sums to, which keeps the loads from being optimised away.
__global__ void k_read(const float4* __restrict__ a, size_t n, float* sink) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = a[i];
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  }
  float s = acc.x + acc.y + acc.z + acc.w;
  if (s == -1.2345678e-30f) *sink = s;
}

__global__ void k_write(float4* __restrict__ a, size_t n, float x) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = make_float4(x, x, x, x);
}

__global__ void k_copy(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = a[i];
}

__global__ void k_triad(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                        size_t n, float x) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 u = b[i], v = c[i];
    a[i] = make_float4(u.x + x * v.x, u.y + x * v.y, u.z + x * v.z, u.w + x * v.w);
  }
}

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  CUDA_CHECK(cudaSetDevice(o.device));
  DeviceInfo dev = device_info(o.device, "");

  // Array sizes: 1 MiB to 4 GiB by factors of 2 (--quick: 1 MiB, 16 MiB,
  // 256 MiB), capped so that the three arrays of triad fit in half the
  // free memory.
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  std::vector<size_t> sizes;
  size_t cap = free_b / 6;
  size_t top = o.quick ? (256ull << 20) : (4ull << 30);
  for (size_t sz = 1ull << 20; sz <= top && sz <= cap; sz *= (o.quick ? 16 : 2)) sizes.push_back(sz);
  if (sizes.empty()) {
    std::fprintf(stderr, "membw: less than 6 MiB of device memory free\n");
    return 1;
  }
  size_t max_s = sizes.back();

  float *a, *b, *c, *sink;
  CUDA_CHECK(cudaMalloc(&a, max_s));
  CUDA_CHECK(cudaMalloc(&b, max_s));
  CUDA_CHECK(cudaMalloc(&c, max_s));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  // Non-zero data: 1.0f is 0x3F800000; any non-zero byte pattern will do.
  CUDA_CHECK(cudaMemset(a, 0x3F, max_s));
  CUDA_CHECK(cudaMemset(b, 0x3F, max_s));
  CUDA_CHECK(cudaMemset(c, 0x3F, max_s));
  CUDA_CHECK(cudaDeviceSynchronize());

  L2Flush flush(dev, flush_mode(o));
  RepPolicy policy = rep_policy(o);
  print_header(o);
  print_flush_note("membw", o);
  const char* kernels[] = {"read", "write", "copy", "triad"};
  for (const char* kname : kernels) {
    std::string kn = kname;
    for (size_t bytes : sizes) {
      size_t n4 = bytes / sizeof(float4);
      int threads = 256;
      // Enough blocks to fill every SM several times over, no more than the data needs.
      int blocks = (int)std::min<size_t>((n4 + threads - 1) / threads, (size_t)dev.sms * 32);
      auto run = [&] {
        if (kn == "read")
          k_read<<<blocks, threads, 0, s>>>((const float4*)a, n4, sink);
        else if (kn == "write")
          k_write<<<blocks, threads, 0, s>>>((float4*)a, n4, 2.0f);
        else if (kn == "copy")
          k_copy<<<blocks, threads, 0, s>>>((const float4*)a, (float4*)b, n4);
        else
          k_triad<<<blocks, threads, 0, s>>>((float4*)a, (const float4*)b, (const float4*)c, n4, 3.0f);
      };
      Stats st = time_events(run, s, &flush, policy);
      double elems = (double)bytes / sizeof(float);
      Row r;
      r.kernel = kn;
      r.dtype = "fp32";
      double arrays = kn == "copy" ? 2 : kn == "triad" ? 3 : 1;
      r.bytes = arrays * (double)bytes;
      r.flops = kn == "read" ? elems : kn == "triad" ? 2 * elems : 0;
      r.time_s = st.median, r.time_min_s = st.min, r.time_max_s = st.max, r.reps = st.reps;
      print_row(dev, r);
    }
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(sink);
  return 0;
}
