// common.h: what every program of perfsim's CUDA calibration suite shares:
// error checks, options, the CSV row and its header, device information,
// an L2 flush, and timing with CUDA events (warm-up, then the median of
// repeated runs).
//
// The CSV schema is documented column by column in README.md and read by
// perfsim's calibrate.ReadCSV; calibrate/kernels_test.go checks that
// CSV_HEADER below is the header ReadCSV expects.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#define CSV_HEADER                                                              \
  "device,driver,clocks,source,kernel,dtype,m,n,k,batch,bytes,flops,time_s,"   \
  "time_min_s,time_max_s,reps,heads,kv_heads,head_dim,q_len,kv_len,ranks"

#define CUDA_CHECK(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                   cudaGetErrorString(err_));                                   \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

// How the L2 is flushed before each timed repetition (L2Flush below).
enum class FlushMode { Read, Write, None };

// Options every program takes.
struct Options {
  bool quick = false;   // --quick: a small grid for a one-minute smoke run
  bool header = true;   // --no-header: leave out the CSV header (run.sh)
  int device = 0;       // --device N
  const char* shapes = nullptr;  // --shapes FILE (gemm only)
  const char* dtypes = nullptr;  // --dtypes a,b,... (gemm only): which, in this order
  const char* flush = "read";    // --flush read|write|none (gemm, membw): the L2 flush
};

inline void usage(const char* prog, const char* extra) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--no-header] [--device N] [--flush read|write|none]%s\n"
               "Prints CSV rows in perfsim's measurement schema on stdout "
               "(see kernels/README.md).\n",
               prog, extra);
}

inline Options parse_options(int argc, char** argv, const char* extra = "") {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--no-header") {
      o.header = false;
    } else if (a == "--device" && i + 1 < argc) {
      o.device = std::atoi(argv[++i]);
    } else if (a == "--shapes" && i + 1 < argc) {
      o.shapes = argv[++i];
    } else if (a == "--dtypes" && i + 1 < argc) {
      o.dtypes = argv[++i];
    } else if (a == "--flush" && i + 1 < argc) {
      o.flush = argv[++i];
      std::string f = o.flush;
      if (f != "read" && f != "write" && f != "none") {
        std::fprintf(stderr, "%s: --flush %s: want read, write or none\n", argv[0], o.flush);
        std::exit(2);
      }
    } else if (a == "-h" || a == "--help") {
      usage(argv[0], extra);
      std::exit(0);
    } else {
      std::fprintf(stderr, "%s: unknown argument %s\n", argv[0], a.c_str());
      usage(argv[0], extra);
      std::exit(2);
    }
  }
  return o;
}

inline FlushMode flush_mode(const Options& o) {
  std::string f = o.flush;
  return f == "write" ? FlushMode::Write : f == "none" ? FlushMode::None : FlushMode::Read;
}

// csv_text quotes a text cell when it holds a comma, a quote or a line
// break, doubling quotes (RFC 4180), as calibrate.ReadCSV reads it.
inline std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

// What the rows of one device share.
struct DeviceInfo {
  std::string name;     // cudaDeviceProp::name, e.g. "NVIDIA H200"
  std::string driver;   // driver and library versions
  std::string clocks;   // clock state, from run.sh's nvidia-smi query
  int cc = 0;           // compute capability, 10·major + minor
  int sms = 0;          // streaming multiprocessors
  size_t l2_bytes = 0;  // L2 cache size
  size_t mem_bytes = 0; // device memory
};

// device_info reads the device's properties. Only fields that CUDA 12
// and 13 both keep are used (CUDA 13 dropped cudaDeviceProp::clockRate
// and memoryClockRate); the driver version and clocks come from
// nvidia-smi, which run.sh passes in PERFSIM_DRIVER and PERFSIM_CLOCKS.
inline DeviceInfo device_info(int dev, const std::string& libs) {
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  DeviceInfo d;
  d.name = p.name;
  d.cc = p.major * 10 + p.minor;
  d.sms = p.multiProcessorCount;
  d.l2_bytes = (size_t)p.l2CacheSize;
  d.mem_bytes = p.totalGlobalMem;
  int drv = 0, rt = 0;
  CUDA_CHECK(cudaDriverGetVersion(&drv));
  CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  char buf[256];
  const char* nv = std::getenv("PERFSIM_DRIVER");
  std::snprintf(buf, sizeof buf, "driver %s; cuda driver %d.%d; runtime %d.%d%s%s",
                nv && *nv ? nv : "unknown", drv / 1000, (drv % 1000) / 10, rt / 1000,
                (rt % 1000) / 10, libs.empty() ? "" : "; ", libs.c_str());
  d.driver = buf;
  const char* clk = std::getenv("PERFSIM_CLOCKS");
  d.clocks = clk && *clk ? clk : "unknown";
  return d;
}

// One CSV row. Shape fields that do not apply stay 0.
struct Row {
  std::string kernel, dtype;
  long long m = 0, n = 0, k = 0, batch = 0;
  double bytes = 0, flops = 0;
  double time_s = 0, time_min_s = 0, time_max_s = 0;
  int reps = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
  long long q_len = 0, kv_len = 0;
  int ranks = 0;
};

inline void print_header(const Options& o) {
  if (o.header) std::printf("%s\n", CSV_HEADER);
}

// print_flush_note writes, as a CSV comment line, how the rows that
// follow flushed the L2, so that a file says how it was measured.
inline void print_flush_note(const char* prog, const Options& o) {
  std::printf("# %s: L2 flush before each repetition: %s\n", prog, o.flush);
}

// print_row writes one row and flushes, so that rows measured before a
// crash or a timeout are kept.
inline void print_row(const DeviceInfo& d, const Row& r) {
  std::printf("%s,%s,%s,perfsim-cuda,%s,%s,%lld,%lld,%lld,%lld,%.17g,%.17g,%.6g,%.6g,%.6g,%d,%d,%d,%d,%lld,%lld,%d\n",
              csv_text(d.name).c_str(), csv_text(d.driver).c_str(), csv_text(d.clocks).c_str(),
              r.kernel.c_str(), r.dtype.c_str(), r.m, r.n, r.k, r.batch, r.bytes, r.flops,
              r.time_s, r.time_min_s, r.time_max_s, r.reps, r.heads, r.kv_heads, r.head_dim,
              r.q_len, r.kv_len, r.ranks);
  std::fflush(stdout);
}

// An L2 flush: sweeping a buffer several times the L2's size evicts what
// a previous repetition left there, so that each repetition reads its
// operands from device memory, as a kernel in a model's step does. The
// sweep also keeps the GPU busy while the host records the start event
// and enqueues the timed kernel, so the host's enqueue time stays out of
// the interval.
//
// --flush read (the default) sweeps with loads: it leaves the L2 full of
// clean lines, which the timed kernel evicts for free. --flush write
// (cudaMemsetAsync) leaves them dirty, and the timed kernel pays for
// writing them back: on an H100 and an H200 (2026-11-26) that made bf16
// GEMMs at decode token counts (m <= 256, memory-bound) 14% slower, the
// median over about 450 shapes, than the read sweep (at prefill counts
// 1-2%), a cost no kernel of a model's step pays for its predecessor's
// data. --flush none
// leaves the L2 as the last repetition left it, and the GPU idle at the
// start event, so the interval also holds the host's enqueue time (the
// same decode GEMMs: 15-17% slower than with the read sweep).
__global__ void flush_read_kernel(const float4* __restrict__ a, size_t n, float* sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = a[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.2345678e-30f) *sink = acc;  // never: keeps the loads
}

struct L2Flush {
  void* buf = nullptr;
  float* sink = nullptr;
  size_t bytes = 0;
  int blocks = 0;
  FlushMode mode = FlushMode::Read;
  L2Flush(const DeviceInfo& d, FlushMode m) : mode(m) {
    bytes = std::max<size_t>(4 * d.l2_bytes, 64u << 20);
    blocks = d.sms * 8;
    CUDA_CHECK(cudaMalloc(&buf, bytes));
    CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
    CUDA_CHECK(cudaMemset(buf, 0, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~L2Flush() {
    cudaFree(buf);
    cudaFree(sink);
  }
  void run(cudaStream_t s) {
    switch (mode) {
      case FlushMode::Read:
        flush_read_kernel<<<blocks, 256, 0, s>>>((const float4*)buf, bytes / sizeof(float4), sink);
        CUDA_CHECK(cudaGetLastError());
        break;
      case FlushMode::Write: CUDA_CHECK(cudaMemsetAsync(buf, 0, bytes, s)); break;
      case FlushMode::None: break;
    }
  }
};

// Timing statistics of repeated runs, in seconds.
struct Stats {
  double median = 0, min = 0, max = 0;
  int reps = 0;
};

inline Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  Stats s;
  size_t n = t.size();
  if (n == 0) return s;
  s.median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  s.min = t.front();
  s.max = t.back();
  s.reps = (int)n;
  return s;
}

// Repetition policy: after `warmup` untimed runs, one timed run gives an
// estimate t; then reps = target/t, clamped to [min_reps, max_reps].
struct RepPolicy {
  int warmup = 2;
  int min_reps = 5;
  int max_reps = 30;
  double target_s = 0.05;  // timed time to aim for per point
};

inline RepPolicy rep_policy(const Options& o) {
  RepPolicy p;
  if (o.quick) {
    p.warmup = 1;
    p.min_reps = 3;
    p.max_reps = 10;
    p.target_s = 0.01;
  }
  return p;
}

// time_events times run() with CUDA events on stream s: warm-up, an
// estimate, then the repetitions, each preceded (outside the timed
// interval) by an L2 flush when flush is not null. Returns the median,
// minimum and maximum of the repetitions.
template <class F>
Stats time_events(F run, cudaStream_t s, L2Flush* flush, const RepPolicy& p) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  auto once = [&]() -> double {
    if (flush) flush->run(s);
    CUDA_CHECK(cudaEventRecord(start, s));
    run();
    CUDA_CHECK(cudaEventRecord(stop, s));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3;
  };
  for (int i = 0; i < p.warmup; i++) run();
  CUDA_CHECK(cudaStreamSynchronize(s));
  double est = std::max(once(), 1e-7);
  int reps = (int)std::min<double>(p.max_reps, std::max<double>(p.min_reps, p.target_s / est));
  std::vector<double> t;
  t.reserve(reps);
  for (int i = 0; i < reps; i++) t.push_back(once());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return stats_of(t);
}

inline double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Progress on stderr, so stdout stays CSV.
#define PROGRESS(...)                 \
  do {                                \
    std::fprintf(stderr, __VA_ARGS__); \
    std::fflush(stderr);              \
  } while (0)
