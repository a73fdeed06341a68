// nccl: times NCCL collectives across all visible GPUs of one node (one
// process, one communicator per GPU: ncclCommInitAll) and prints one CSV
// row per collective and size (schema: README.md). Built only where
// nccl.h is found; with fewer than two GPUs it prints nothing and says so.
//
//   all_reduce  sum of S bytes of bf16 on every rank       bytes = S
//   all_gather  every rank contributes S/ranks, receives S  bytes = S
//   all_to_all  every rank sends S/ranks to each rank       bytes = S
//               (ncclSend/ncclRecv pairs in one group)
// S follows nccl-tests' "size" convention; for all_gather and all_to_all
// it is rounded down to whole bf16 elements per rank (3, 5, 6 or 7 GPUs).
// A sample is the slowest rank's time from its own start event to its
// stop event (events of different GPUs cannot be compared), as a
// training step waits for the slowest rank. No L2 flush: collectives
// stream their buffers once.
#include "common.h"

#include <cuda_bf16.h>  // before nccl.h, which defines ncclBfloat16 when the bf16 type exists
#include <nccl.h>

#define NCCL_CHECK(call)                                                            \
  do {                                                                              \
    ncclResult_t r_ = (call);                                                       \
    if (r_ != ncclSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                   ncclGetErrorString(r_));                                         \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  int ndev = 0;
  CUDA_CHECK(cudaGetDeviceCount(&ndev));
  if (ndev < 2) {
    PROGRESS("nccl: %d GPU visible; collectives need 2 or more: skipped\n", ndev);
    return 0;
  }
  int nv = 0;
  NCCL_CHECK(ncclGetVersion(&nv));
  char libs[64];
  std::snprintf(libs, sizeof libs, "nccl %d", nv);
  DeviceInfo dev = device_info(0, libs);

  // Sizes: 1 KiB to 1 GiB by factors of 4 (--quick: 64 KiB, 4 MiB, 256 MiB).
  std::vector<size_t> sizes;
  for (size_t sz = 1u << 10; sz <= (1ull << 30); sz *= 4)
    if (!o.quick || sz == (64u << 10) || sz == (4u << 20) || sz == (256u << 20)) sizes.push_back(sz);
  size_t max_s = sizes.back();

  std::vector<ncclComm_t> comms(ndev);
  std::vector<int> devs(ndev);
  for (int d = 0; d < ndev; d++) devs[d] = d;
  NCCL_CHECK(ncclCommInitAll(comms.data(), ndev, devs.data()));
  std::vector<cudaStream_t> streams(ndev);
  std::vector<char*> send(ndev), recv(ndev);
  std::vector<cudaEvent_t> start(ndev), stop(ndev);
  for (int d = 0; d < ndev; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamCreate(&streams[d]));
    CUDA_CHECK(cudaMalloc(&send[d], max_s));
    CUDA_CHECK(cudaMalloc(&recv[d], max_s));
    CUDA_CHECK(cudaMemset(send[d], 0x3C, max_s));  // non-zero bf16 (0x3C3C ≈ 0.0115)
    CUDA_CHECK(cudaEventCreate(&start[d]));
    CUDA_CHECK(cudaEventCreate(&stop[d]));
  }
  for (int d = 0; d < ndev; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  const int warmup = 5;
  const int reps = o.quick ? 5 : 20;
  print_header(o);
  const char* ops[] = {"all_reduce", "all_gather", "all_to_all"};
  for (const char* opname : ops) {
    std::string op = opname;
    for (size_t S : sizes) {
      size_t elems = S / 2;                 // bf16 elements in S bytes
      size_t chunk = elems / ndev;          // elements per rank of all_gather / all_to_all
      if (chunk == 0) continue;
      auto issue = [&] {
        NCCL_CHECK(ncclGroupStart());
        for (int d = 0; d < ndev; d++) {
          if (op == "all_reduce") {
            NCCL_CHECK(ncclAllReduce(send[d], recv[d], elems, ncclBfloat16, ncclSum, comms[d], streams[d]));
          } else if (op == "all_gather") {
            NCCL_CHECK(ncclAllGather(send[d], recv[d], chunk, ncclBfloat16, comms[d], streams[d]));
          } else {
            for (int p = 0; p < ndev; p++) {
              NCCL_CHECK(ncclSend(send[d] + p * chunk * 2, chunk, ncclBfloat16, p, comms[d], streams[d]));
              NCCL_CHECK(ncclRecv(recv[d] + p * chunk * 2, chunk, ncclBfloat16, p, comms[d], streams[d]));
            }
          }
        }
        NCCL_CHECK(ncclGroupEnd());
      };
      auto sync_all = [&] {
        for (int d = 0; d < ndev; d++) {
          CUDA_CHECK(cudaSetDevice(d));
          CUDA_CHECK(cudaStreamSynchronize(streams[d]));
        }
      };
      for (int i = 0; i < warmup; i++) issue();
      sync_all();
      std::vector<double> t;
      for (int i = 0; i < reps; i++) {
        for (int d = 0; d < ndev; d++) {
          CUDA_CHECK(cudaSetDevice(d));
          CUDA_CHECK(cudaEventRecord(start[d], streams[d]));
        }
        issue();
        for (int d = 0; d < ndev; d++) {
          CUDA_CHECK(cudaSetDevice(d));
          CUDA_CHECK(cudaEventRecord(stop[d], streams[d]));
        }
        sync_all();
        // Events of different devices cannot be compared, so take the
        // slowest rank's own interval.
        double worst = 0;
        for (int d = 0; d < ndev; d++) {
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, start[d], stop[d]));
          worst = std::max(worst, ms * 1e-3);
        }
        t.push_back(worst);
      }
      Stats st = stats_of(t);
      Row r;
      r.kernel = op;
      r.dtype = "bf16";
      // What moved: all_gather and all_to_all move chunk·ranks elements,
      // which is S only when the ranks divide S/2 (not at 3, 5, 6 or 7 GPUs).
      r.bytes = op == "all_reduce" ? (double)S : (double)(chunk * ndev * 2);
      r.ranks = ndev;
      r.time_s = st.median, r.time_min_s = st.min, r.time_max_s = st.max, r.reps = st.reps;
      print_row(dev, r);
    }
  }
  for (int d = 0; d < ndev; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    cudaFree(send[d]);
    cudaFree(recv[d]);
    cudaEventDestroy(start[d]);
    cudaEventDestroy(stop[d]);
    cudaStreamDestroy(streams[d]);
    ncclCommDestroy(comms[d]);
  }
  return 0;
}
