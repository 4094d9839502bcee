// Package storagetest is the conformance suite every storage.Interface
// implementation runs: one subtest per behaviour the registry relies on
// (create, get, guaranteed update, delete with preconditions, list with
// selectors and pagination, resourceVersion rules, watch from 0, from N
// and from a compacted revision, selector transitions, initial events).
//
//	func TestStore(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
//			client := etcd3test.Start(t)
//			return storagetest.Fixture{
//				Store:  etcd3.New(etcd3.Config{Client: client}),
//				Keys:   storage.ResourceKeys{Resource: "configmaps", Namespaced: true},
//				Client: client,
//			}
//		})
//	}
//
// Every subtest builds its own Fixture and runs in parallel with the
// others. Waits are bounded by deadlines; nothing asserts on timing.
package storagetest

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapi/miniapi/storage"
)

// Fixture is one Store under test and what the suite needs around it.
type Fixture struct {
	// Store is the implementation under test, empty under Keys.Prefix().
	Store storage.Interface
	// Keys lays out the keys the suite writes: a namespaced resource. Its
	// Prefix is what the suite lists and watches.
	Keys storage.ResourceKeys
	// Client is the etcd client the Store's data lives in. The suite
	// reads etcd's revision through it (to check that a no-op update
	// wrote nothing) and, unless Compact is set, compacts through it.
	Client *clientv3.Client
	// Compact, if set, makes every revision before rev unavailable to
	// Store: lists at those revisions, continue tokens pinned to them
	// and watches starting from them fail with a Compacted error. It
	// must compact etcd and do whatever else Store needs to forget its
	// history (a cache might restart or trim its event history). Nil
	// compacts etcd through Client.
	Compact func(ctx context.Context, rev int64) error
}

// Run runs the conformance suite. newFixture is called once per subtest,
// from that subtest, and should register its cleanup with t.Cleanup.
func Run(t *testing.T, newFixture func(t *testing.T) Fixture) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{
		{"CreateThenGet", testCreateThenGet},
		{"CreateExisting", testCreateExisting},
		{"GetMissing", testGetMissing},
		{"GetResourceVersions", testGetResourceVersions},
		{"GetTooLargeResourceVersion", testGetTooLargeResourceVersion},
		{"UpdateHappyPath", testUpdateHappyPath},
		{"UpdateNoOpWritesNothing", testUpdateNoOp},
		{"UpdateConcurrentLosesNothing", testUpdateConcurrent},
		{"UpdatePreconditions", testUpdatePreconditions},
		{"UpdateMissing", testUpdateMissing},
		{"UpdateIgnoreNotFoundCreates", testUpdateIgnoreNotFound},
		{"UpdateErrorReturnedAsIs", testUpdateErrorAsIs},
		{"DeletePreconditions", testDeletePreconditions},
		{"DeleteMissing", testDeleteMissing},
		{"DeleteValidateRejects", testDeleteValidateRejects},
		{"ListAllAndByNamespace", testListNamespaces},
		{"ListLabelSelector", testListLabelSelector},
		{"ListFieldSelector", testListFieldSelector},
		{"ListPagesPinnedToFirstRevision", testListPagination},
		{"ListPagesWithSelectorFillLimit", testListPagesWithSelector},
		{"ListContinueCompacted", testListContinueCompacted},
		{"ListInvalidContinue", testListInvalidContinue},
		{"ListExactOldRevision", testListExact},
		{"ListTooLargeResourceVersion", testListTooLargeResourceVersion},
		{"WatchFromZero", testWatchFromZero},
		{"WatchFromN", testWatchFromN},
		{"WatchDeletedCarriesLastState", testWatchDeleted},
		{"WatchSelectorTransitions", testWatchSelectorTransitions},
		{"WatchCompacted", testWatchCompacted},
		{"WatchStopCloses", testWatchStop},
		{"WatchSendInitialEvents", testWatchSendInitialEvents},
		{"WatchNoInitialEvents", testWatchNoInitialEvents},
		{"WatchOneKey", testWatchOneKey},
		{"WatchInvalidResourceVersion", testWatchInvalidResourceVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newFixture(t))
		})
	}
}
