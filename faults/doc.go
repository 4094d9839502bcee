// Package faults injects the failures a real cluster deals out into a
// miniapi server's own requests, watches and etcd calls, for tests that
// show a controller survives them: conflicts, throttling (429 with
// Retry-After), internal errors and timeouts, latency, watches that
// end, break or expire (410), late watch events, an etcd that does not
// answer. Rules match requests by verb, resource, namespace, name, user
// agent, user and field manager; their random draws come from a seed,
// so a run can be repeated; every fault is counted and logged. Rules
// are set in Go (miniapitest's Env.Faults) or, for the binary, through
// the admin endpoint at Path.
package faults
