// gemm: times GEMMs through cuBLAS (fp32, tf32, bf16, fp16: cublasGemmEx)
// and cuBLASLt (fp8 e4m3 and int8: cublasLtMatmul) over a grid of shapes,
// and prints one CSV row per GEMM (schema: README.md).
//
// Every GEMM is y[m×n] = x[m×k] · W[n×k]ᵀ, PyTorch's nn.Linear: m is the
// tokens, n the output features, k the input features. cuBLAS is
// column-major, so it runs as yᵀ[n×m] = W · xᵀ: cuBLAS's (m, n, k) is our
// (n, m, k), W is stored k×n and transposed (lda = k), x is stored k×m
// (ldb = k), yᵀ is n×m (ldc = n): the "TN" layout, which fp8 requires.
//
// The grid (see README.md for its time budget): squares 256…16384; the
// projection shapes of shapes.txt at decode (m = 1…256) and prefill
// (m = 512…8192) token counts; odd sizes either side of tile edges (m =
// 255/256/257, 767/768/769, …; n = 4095/4096/4097); and a wave sweep
// (m = 1024, k = 4096, n = 512…8192 by 512) that crosses from one wave of
// tiles to several. --quick runs a 26-shape subset.
#include "common.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#define CUBLAS_CHECK(call)                                                   \
  do {                                                                       \
    cublasStatus_t st_ = (call);                                             \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                   cublasGetStatusString(st_));                              \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

// The data types timed, with their sizes in bytes: inputs (A and B) and
// output (C). fp8 writes bf16; int8 accumulates and writes int32.
enum DT { FP32, TF32, BF16, FP16, FP8, INT8, NUM_DT };
struct DTInfo {
  const char* name;
  int in_bytes, out_bytes;
  bool lt;  // through cuBLASLt
};
static const DTInfo kDT[NUM_DT] = {
    {"fp32", 4, 4, false}, {"tf32", 4, 4, false}, {"bf16", 2, 2, false},
    {"fp16", 2, 2, false}, {"fp8", 1, 2, true},   {"int8", 1, 4, true},
};

struct Shape {
  long long m, n, k;
};

struct Projection {
  long long n, k;
  bool prefill;  // also timed at prefill token counts
};

// read_shapes reads shapes.txt: "model layer n k phases" per line, '#'
// comments. Exits with file:line on a malformed line.
static std::vector<Projection> read_shapes(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "gemm: cannot open %s (pass --shapes FILE)\n", path.c_str());
    std::exit(1);
  }
  std::vector<Projection> ps;
  std::string line;
  for (int ln = 1; std::getline(in, line); ln++) {
    size_t h = line.find('#');
    if (h != std::string::npos) line.resize(h);
    std::istringstream ss(line);
    std::string model, layer, phases;
    long long n = 0, k = 0;
    if (!(ss >> model)) continue;  // blank or comment
    if (!(ss >> layer >> n >> k >> phases) || n <= 0 || k <= 0 ||
        (phases != "both" && phases != "decode")) {
      std::fprintf(stderr, "%s:%d: want \"model layer n k both|decode\"\n", path.c_str(), ln);
      std::exit(1);
    }
    ps.push_back({n, k, phases == "both"});
  }
  if (ps.empty()) {
    std::fprintf(stderr, "%s: no shapes\n", path.c_str());
    std::exit(1);
  }
  return ps;
}

// grid returns the shapes to time, each once, in a fixed order.
static std::vector<Shape> grid(const std::vector<Projection>& projs, bool quick) {
  std::vector<Shape> out;
  std::set<std::tuple<long long, long long, long long>> seen;
  auto add = [&](long long m, long long n, long long k) {
    if (seen.insert(std::make_tuple(m, n, k)).second) out.push_back(Shape{m, n, k});
  };
  std::vector<long long> squares = {256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
  std::vector<long long> decode = {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
  std::vector<long long> prefill = {512, 1024, 2048, 4096, 8192};
  std::vector<long long> odd_m = {255, 256, 257, 767, 768, 769, 2047, 2048, 2049};
  std::vector<long long> odd_n = {4095, 4096, 4097};
  std::vector<Projection> ps = projs;
  if (quick) {
    squares = {256, 1024, 4096};
    decode = {1, 16, 128};
    prefill = {2048};
    odd_m = {768, 769};
    odd_n = {4096, 4097};
    if (ps.size() > 5) ps.resize(5);
  }
  for (long long s : squares) add(s, s, s);
  for (const Projection& p : ps)
    for (long long m : decode) add(m, p.n, p.k);
  for (const Projection& p : ps)
    if (p.prefill)
      for (long long m : prefill) add(m, p.n, p.k);
  for (long long m : odd_m)
    for (long long n : odd_n) add(m, n, 4096);
  if (!quick)
    for (long long n = 512; n <= 8192; n += 512) add(1024, n, 4096);
  return out;
}

static long long round_up(long long x, long long a) { return (x + a - 1) / a * a; }

// hash_uniform returns a value in [-1, 1) from an element index: inputs
// that are neither zero nor constant, so that the GEMMs draw the power
// (and run at the clocks) of real data.
__device__ inline float hash_uniform(unsigned long long i, unsigned seed) {
  unsigned x = (unsigned)(i ^ (i >> 32)) * 2654435761u ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

template <class T>
__global__ void fill(T* p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = T(hash_uniform(i, seed) * scale);
}

template <class T>
static void fill_buffer(void* p, size_t n, unsigned seed, float scale, int sms) {
  fill<T><<<sms * 8, 256>>>(static_cast<T*>(p), n, seed, scale);
  CUDA_CHECK(cudaGetLastError());
}

// fill_inputs writes random values of dtype dt into the first n elements
// of p.
static void fill_inputs(DT dt, void* p, size_t n, unsigned seed, int sms) {
  switch (dt) {
    case FP32:
    case TF32: fill_buffer<float>(p, n, seed, 1.0f, sms); break;
    case BF16: fill_buffer<__nv_bfloat16>(p, n, seed, 1.0f, sms); break;
    case FP16: fill_buffer<__half>(p, n, seed, 1.0f, sms); break;
    case FP8: fill_buffer<__nv_fp8_e4m3>(p, n, seed, 1.0f, sms); break;
    case INT8: fill_buffer<int8_t>(p, n, seed, 64.0f, sms); break;
    default: break;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

// Buffers, allocated once for the largest shape of the grid.
struct Buffers {
  void *a = nullptr, *b = nullptr, *c = nullptr, *ws = nullptr;
  size_t a_elems = 0, b_elems = 0, c_elems = 0;
  size_t ws_bytes = 32u << 20;  // cuBLASLt workspace (32 MiB, as PyTorch gives Hopper)
};

// A cuBLASLt plan for one fp8 or int8 shape: descriptors and the
// heuristic's first algorithm.
struct LtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool ok = false;
  std::string why;
  ~LtPlan() {
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// lt_plan sets up C = W·x for fp8 (e4m3 in, bf16 out, fp32 compute and
// scale) or int8 (int8 in, int32 out, int32 compute and scale), TN, as
// cuBLASLt requires for both: A transposed, B not; k a multiple of 16;
// leading dimensions multiples of 16 elements (ldc is padded to that).
static void lt_plan(LtPlan& p, cublasLtHandle_t lt, DT dt, const Shape& s, long long ldc, const Buffers& buf) {
  auto fail = [&](const char* what, cublasStatus_t st) {
    p.why = std::string(what) + ": " + cublasGetStatusString(st);
  };
  cublasComputeType_t ct = dt == FP8 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32I;
  cudaDataType_t scale = dt == FP8 ? CUDA_R_32F : CUDA_R_32I;
  cudaDataType_t tin = dt == FP8 ? CUDA_R_8F_E4M3 : CUDA_R_8I;
  cudaDataType_t tout = dt == FP8 ? CUDA_R_16BF : CUDA_R_32I;
  cublasStatus_t st;
  if ((st = cublasLtMatmulDescCreate(&p.op, ct, scale)) != CUBLAS_STATUS_SUCCESS) return fail("desc", st);
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  // cuBLAS (rows, cols, ld): W is k×n, x is k×m, yᵀ is n×m.
  if ((st = cublasLtMatrixLayoutCreate(&p.la, tin, s.k, s.n, s.k)) != CUBLAS_STATUS_SUCCESS) return fail("layout A", st);
  if ((st = cublasLtMatrixLayoutCreate(&p.lb, tin, s.k, s.m, s.k)) != CUBLAS_STATUS_SUCCESS) return fail("layout B", st);
  if ((st = cublasLtMatrixLayoutCreate(&p.lc, tout, s.n, s.m, ldc)) != CUBLAS_STATUS_SUCCESS) return fail("layout C", st);
  cublasLtMatmulPreference_t pref;
  if ((st = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS) return fail("preference", st);
  size_t ws = buf.ws_bytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t res;
  int n = 0;
  st = cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.la, p.lb, p.lc, p.lc, pref, 1, &res, &n);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) return fail("heuristic", st);
  if (n == 0) {
    p.why = "no cuBLASLt algorithm for this shape";
    return;
  }
  p.algo = res.algo;
  p.ok = true;
}

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv, " [--shapes FILE] [--dtypes fp32,tf32,bf16,fp16,fp8,int8]");
  CUDA_CHECK(cudaSetDevice(o.device));
  std::string shapes_path;
  if (o.shapes) {
    shapes_path = o.shapes;
  } else {  // the binary lives in kernels/bin/, shapes.txt in kernels/
    std::string self = argv[0];
    size_t slash = self.rfind('/');
    shapes_path = (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/../shapes.txt";
  }
  std::vector<Shape> shapes = grid(read_shapes(shapes_path), o.quick);

  char libs[64];
  std::snprintf(libs, sizeof libs, "cublas %d", CUBLAS_VERSION);
  DeviceInfo dev = device_info(o.device, libs);
  bool has_fp8 = dev.cc >= 89;  // fp8 tensor cores: Ada (sm_89) and Hopper (sm_90) on

  // Allocate for the largest operands of the grid (4 bytes per element
  // bounds every type; C's leading dimension padded to 16).
  Buffers buf;
  for (const Shape& s : shapes) {
    buf.a_elems = std::max(buf.a_elems, (size_t)(s.m * s.k));
    buf.b_elems = std::max(buf.b_elems, (size_t)(s.n * s.k));
    buf.c_elems = std::max(buf.c_elems, (size_t)(s.m * round_up(s.n, 16)));
  }
  size_t need = 4 * (buf.a_elems + buf.b_elems + buf.c_elems) + buf.ws_bytes;
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need > free_b) {
    std::fprintf(stderr, "gemm: needs %.1f GB of device memory, %.1f GB free; try --quick\n", need / 1e9, free_b / 1e9);
    return 1;
  }
  CUDA_CHECK(cudaMalloc(&buf.a, 4 * buf.a_elems));
  CUDA_CHECK(cudaMalloc(&buf.b, 4 * buf.b_elems));
  CUDA_CHECK(cudaMalloc(&buf.c, 4 * buf.c_elems));
  CUDA_CHECK(cudaMalloc(&buf.ws, buf.ws_bytes));

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasSetStream(h, stream));
  cublasLtHandle_t lt;
  CUBLAS_CHECK(cublasLtCreate(&lt));
  L2Flush flush(dev, flush_mode(o));
  RepPolicy policy = rep_policy(o);

  // The data types to time, in the order --dtypes gives (default: all, in
  // kDT's order), so that a run cut short keeps the ones that matter most.
  std::vector<DT> order;
  if (o.dtypes) {
    std::stringstream ss(o.dtypes);
    std::string name;
    while (std::getline(ss, name, ',')) {
      int found = -1;
      for (int d = 0; d < NUM_DT; d++)
        if (name == kDT[d].name) found = d;
      if (found < 0) {
        std::fprintf(stderr, "gemm: --dtypes: unknown data type \"%s\" (want fp32, tf32, bf16, fp16, fp8, int8)\n", name.c_str());
        return 2;
      }
      if (std::find(order.begin(), order.end(), (DT)found) == order.end()) order.push_back((DT)found);
    }
  } else {
    for (int d = 0; d < NUM_DT; d++) order.push_back((DT)d);
  }

  print_header(o);
  print_flush_note("gemm", o);
  double t0 = now_s(), last = t0;
  int done = 0, total = (int)(shapes.size() * order.size());
  for (DT dt : order) {
    const DTInfo& info = kDT[dt];
    if (dt == FP8 && !has_fp8) {
      PROGRESS("gemm: skipping fp8: compute capability %d.%d has no fp8 tensor cores (needs 8.9+)\n", dev.cc / 10, dev.cc % 10);
      done += (int)shapes.size();
      continue;
    }
    fill_inputs(dt, buf.a, buf.a_elems, 1, dev.sms);
    fill_inputs(dt, buf.b, buf.b_elems, 2, dev.sms);
    int skipped = 0;
    for (const Shape& s : shapes) {
      done++;
      if (now_s() - last > 5) {
        last = now_s();
        PROGRESS("gemm: %d/%d (%s %lldx%lldx%lld), %.0f s\n", done, total, info.name, s.m, s.n, s.k, last - t0);
      }
      Row r;
      r.kernel = "gemm";
      r.dtype = info.name;
      r.m = s.m, r.n = s.n, r.k = s.k, r.batch = 1;
      r.flops = 2.0 * s.m * s.n * s.k;
      r.bytes = (double)(s.m * s.k + s.n * s.k) * info.in_bytes + (double)(s.m * s.n) * info.out_bytes;
      Stats st;
      if (!info.lt) {
        cudaDataType_t t = dt == BF16 ? CUDA_R_16BF : dt == FP16 ? CUDA_R_16F : CUDA_R_32F;
        cublasComputeType_t ct = dt == TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        const float alpha = 1.0f, beta = 0.0f;
        auto run = [&] {
          CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)s.n, (int)s.m, (int)s.k, &alpha,
                                    buf.b, t, (int)s.k, buf.a, t, (int)s.k, &beta, buf.c, t, (int)s.n,
                                    ct, CUBLAS_GEMM_DEFAULT));
        };
        st = time_events(run, stream, &flush, policy);
      } else {
        if (s.k % 16 != 0) {
          skipped++;
          continue;  // cuBLASLt fp8/int8: k must be a multiple of 16
        }
        long long ldc = round_up(s.n, 16);
        LtPlan p;
        lt_plan(p, lt, dt, s, ldc, buf);
        if (!p.ok) {
          PROGRESS("gemm: skipping %s %lldx%lldx%lld: %s\n", info.name, s.m, s.n, s.k, p.why.c_str());
          skipped++;
          continue;
        }
        const float falpha = 1.0f, fbeta = 0.0f;
        const int32_t ialpha = 1, ibeta = 0;
        const void* alpha = dt == FP8 ? (const void*)&falpha : (const void*)&ialpha;
        const void* beta = dt == FP8 ? (const void*)&fbeta : (const void*)&ibeta;
        auto call = [&] {
          return cublasLtMatmul(lt, p.op, alpha, buf.b, p.la, buf.a, p.lb, beta, buf.c, p.lc, buf.c, p.lc,
                                &p.algo, buf.ws, buf.ws_bytes, stream);
        };
        cublasStatus_t trial = call();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (trial != CUBLAS_STATUS_SUCCESS) {
          PROGRESS("gemm: skipping %s %lldx%lldx%lld: %s\n", info.name, s.m, s.n, s.k, cublasGetStatusString(trial));
          skipped++;
          continue;
        }
        auto run = [&] { CUBLAS_CHECK(call()); };
        st = time_events(run, stream, &flush, policy);
      }
      r.time_s = st.median, r.time_min_s = st.min, r.time_max_s = st.max, r.reps = st.reps;
      print_row(dev, r);
    }
    if (skipped) PROGRESS("gemm: %s: %d shapes skipped (cuBLASLt needs k %% 16 == 0, or had no algorithm)\n", info.name, skipped);
  }
  PROGRESS("gemm: %d points in %.0f s\n", total, now_s() - t0);

  CUBLAS_CHECK(cublasLtDestroy(lt));
  CUBLAS_CHECK(cublasDestroy(h));
  CUDA_CHECK(cudaStreamDestroy(stream));
  cudaFree(buf.a);
  cudaFree(buf.b);
  cudaFree(buf.c);
  cudaFree(buf.ws);
  return 0;
}
