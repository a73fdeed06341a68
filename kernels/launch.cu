// launch: times the overhead of launching a kernel that does nothing, and
// prints two CSV rows (schema: README.md):
//   launch       back to back: CUDA events around 1000 launches on one
//                stream, divided by 1000; the launch rate a stream of
//                kernels pays per kernel
//   launch_sync  a launch and a cudaStreamSynchronize, timed by the host
//                clock over 200 iterations, divided by 200: the round trip
//                a kernel pays when the host waits for it
//   launch_graph 1000 launches captured in a CUDA graph, the graph replayed
//                between CUDA events, divided by 1000: what each kernel of
//                a step replayed from a graph pays (serving engines replay
//                their decode steps so)
// Each row is the median of 21 samples (--quick: 5) after a warm-up.
#include "common.h"

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  CUDA_CHECK(cudaSetDevice(o.device));
  DeviceInfo dev = device_info(o.device, "");
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const int samples = o.quick ? 5 : 21;
  const int n_b2b = 1000, n_sync = 200;

  for (int i = 0; i < 100; i++) empty_kernel<<<1, 1, 0, s>>>();  // warm-up: module load, first launches
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaGetLastError());

  // The graph: n_b2b launches captured from the stream.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < n_b2b; i++) empty_kernel<<<1, 1, 0, s>>>();
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; i++) CUDA_CHECK(cudaGraphLaunch(exec, s));  // warm-up: upload
  CUDA_CHECK(cudaStreamSynchronize(s));

  std::vector<double> b2b, sync, graphed;
  for (int j = 0; j < samples; j++) {
    CUDA_CHECK(cudaEventRecord(start, s));
    for (int i = 0; i < n_b2b; i++) empty_kernel<<<1, 1, 0, s>>>();
    CUDA_CHECK(cudaEventRecord(stop, s));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    b2b.push_back(ms * 1e-3 / n_b2b);

    double t0 = now_s();
    for (int i = 0; i < n_sync; i++) {
      empty_kernel<<<1, 1, 0, s>>>();
      CUDA_CHECK(cudaStreamSynchronize(s));
    }
    sync.push_back((now_s() - t0) / n_sync);

    CUDA_CHECK(cudaEventRecord(start, s));
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaEventRecord(stop, s));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    graphed.push_back(ms * 1e-3 / n_b2b);
  }
  CUDA_CHECK(cudaGetLastError());

  print_header(o);
  const char* names[] = {"launch", "launch_sync", "launch_graph"};
  std::vector<double>* series[] = {&b2b, &sync, &graphed};
  for (int i = 0; i < 3; i++) {
    Stats st = stats_of(*series[i]);
    Row r;
    r.kernel = names[i];
    r.time_s = st.median, r.time_min_s = st.min, r.time_max_s = st.max, r.reps = st.reps;
    print_row(dev, r);
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaStreamDestroy(s));
  return 0;
}
