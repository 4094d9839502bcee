// Command bench measures miniapi's list-watch data path, each figure
// against a baseline measured in the same run, as DESIGN.md ("Performance
// design") and STYLE.md convention 20 ask. It starts miniapi in-process
// (server.Start over an embedded etcd with fsync off, in a temporary
// directory, on 127.0.0.1) and talks to it over loopback HTTP/1.1.
//
// Scenarios (issue 3, requirement 8):
//
//   - fanout: N watchers (default 100, 1,000 and 5,000), each its own
//     HTTP/1.1 connection, watch ConfigMaps in one namespace while writers
//     update objects at a rate stepped up from 1 event/s until it is no
//     longer sustained (p99 latency from write acknowledgement to receipt
//     above 100 ms, an event missing, or the writers falling behind). The
//     baseline is a tiny net/http server in the same process that streams
//     pre-encoded frames of the same size to the same number of chunked
//     responses, driven and read by the same client code.
//   - writepath: 100 watchers and unpaced concurrent writers: the update
//     rate miniapi sustains where the write path limits, against raw etcd
//     puts of the same bytes at the same concurrency.
//   - list: a list of 10,000 ~1 KiB objects from the watch cache against
//     the same list from etcd, in-process at the storage level and over
//     HTTP.
//   - memory: heap per cached object (against a plain list of the same
//     objects) and heap, stack and goroutines per idle watcher, in-process
//     (against etcd watches) and over HTTP (against raw streams).
//   - create: creates over HTTP at 1, 16 and 64 concurrent clients against
//     raw etcd puts of the same bytes at the same concurrency.
//   - startup (issue 5, requirement 7): time from server.Start (in-process)
//     and from exec of the built binary to the first 200 from /readyz, over
//     an empty data directory and over one holding 10,000 objects and 20
//     extra types; median, min, p90 and max of 20 runs each, and the live
//     heap (in-process) or resident set (binary) one second after ready.
//     The empty cases run again with every built-in controller off, the
//     runs of all cases interleaved, for what the controllers add (issue
//     14, requirement 6).
//   - cluster (issue 14, requirement 6): what the simulated cluster and
//     every controller cost, against a server with all of it off in the
//     same run. Start: wall and CPU time (getrusage of the process) from
//     server.Start to the first 200 from /readyz with every controller,
//     one node, the scheduler and the kubelet, against none of them; 10
//     runs each, interleaved, medians. Deployment: a Deployment of 3
//     pods created through client-go with its defaults (protobuf), timed
//     from the create to the watch event whose status.readyReplicas is
//     3; 5 in a row, median. Idle: the process's CPU over 30 s, as a
//     percentage of one core, of a server left 10 s to settle with
//     everything on and 10 nodes, against one with everything off; with
//     -profile-dir, CPU profiles of both (cluster-idle-on.pprof,
//     cluster-idle-off.pprof).
//   - logical and fork (issue 15): a new logical cluster on a shared
//     member to ready against a server with a member of its own, the heap,
//     resident set and goroutines each of 20 idle logical clusters (with
//     -profile-dir, a heap profile of them, logical-idle.heap.pprof), 200
//     parallel tests each with a cluster of its own (a CPU profile,
//     logical-parallel.pprof); a start from a
//     snapshot of 10,000 objects against an empty start (with
//     -profile-dir, a CPU profile, fork.pprof).
//
// Usage:
//
//	go run ./test/bench                  # every scenario; a few minutes on 2 cores
//	go run ./test/bench -quick           # a ~30 s smoke run
//	go run ./test/bench -json >out.json  # machine-readable report (table on stderr)
//	go run ./test/bench -scenarios fanout -watchers 1000 -rates 200,400 -step 10s -profile-dir /tmp/prof
//	go run ./test/bench -scenarios cluster -cluster-idle 60s -profile-dir /tmp/prof
//
// Every loop is bounded in count and in time; nothing listens beyond
// 127.0.0.1. Figures are never asserted: bench_test.go only checks that a
// tiny run produces them. test/bench/RESULTS.md records a full run.
package main
