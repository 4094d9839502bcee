package etcd3

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/etcd3/metrics"
)

// Every etcd request a Store makes goes through get or commit, which
// record it in kube-apiserver's etcd metrics (etcd_request_duration_seconds,
// etcd_requests_total, etcd_request_errors_total) under the operation
// names kube-apiserver's store uses: get, create, update, delete, list,
// getCurrentResourceVersion. A Store without Config.Resource records
// nothing. The metrics are k8s.io/apiserver's, process-global, and
// registered by etcd3metrics.Register (New calls it).

// get is client.Get, recorded as op.
func (s *Store) get(ctx context.Context, op, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	start := time.Now()
	resp, err := s.client.Get(ctx, key, opts...)
	s.record(op, start, err)
	return resp, err
}

// commit commits txn, recorded as op.
func (s *Store) commit(op string, txn clientv3.Txn) (*clientv3.TxnResponse, error) {
	start := time.Now()
	resp, err := txn.Commit()
	s.record(op, start, err)
	return resp, err
}

// record observes one etcd request of operation op that started at start.
func (s *Store) record(op string, start time.Time, err error) {
	if s.resource.Resource != "" {
		metrics.RecordEtcdRequest(op, s.resource, err, start)
	}
}

// recordEvent counts one event received from etcd's watch.
func (s *Store) recordEvent() {
	if s.resource.Resource != "" {
		metrics.RecordEtcdEvent(s.resource)
	}
}

// recordBookmark counts one progress notification received from etcd's
// watch.
func (s *Store) recordBookmark() {
	if s.resource.Resource != "" {
		metrics.RecordEtcdBookmark(s.resource)
	}
}
