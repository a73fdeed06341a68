// Package plan searches deployments: for serving under latency SLOs
// (Serve), the layouts (TP, PP, replicas), data types and batch limits
// of a model on a device, each candidate it reports checked by a full
// simulation of package serve; and the highest rate a deployment
// sustains (MaxRate), by bisection. It prints nothing.
//
// A search enumerates a declared space, prunes what cannot run (a
// layout whose weights leave no KV cache, a request that cannot fit) and
// what cannot meet the load (fewer replicas than the rate over one
// replica's throughput at maximum load, an optimistic bound), and
// simulates the rest; it counts what it saw, pruned and simulated.
package plan
