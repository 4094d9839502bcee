package etcd3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"k8s.io/utils/ptr"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
	"github.com/miniapi/miniapi/storage/storagetest"
)

var configMaps = storage.ResourceKeys{Resource: "configmaps", Namespaced: true}

func TestStore(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
		client := etcd3test.Start(t)
		return storagetest.Fixture{Store: etcd3.New(etcd3.Config{Client: client}), Keys: configMaps, Client: client}
	})
}

// TestStoreLoopbackClient runs the suite through a gRPC client, the path
// an external cluster takes, rather than the in-process one.
func TestStoreLoopbackClient(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite already ran in-process")
	}
	storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
		emb := etcd3test.StartEmbedded(t)
		client, err := etcd3.NewClient(etcd3.ClientConfig{Endpoints: []string{emb.Endpoint()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		return storagetest.Fixture{Store: etcd3.New(etcd3.Config{Client: client}), Keys: configMaps, Client: client}
	})
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func configMap(name string, labels map[string]string) []byte {
	b, err := json.Marshal(&api.Object{
		APIVersion: "v1",
		Kind:       "ConfigMap",
		Metadata:   api.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + name, Labels: labels},
		Fields:     map[string]json.RawMessage{"data": json.RawMessage(`{"k":"v"}`)},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// TestStoreUnderPrefix runs the conformance suite on a Store whose
// client's KV is namespaced and whose watches go through the unprefixed
// client (Config.Watcher), as a logical cluster's are, with another
// namespace's keys written alongside: the Store sees only its own keys,
// with the prefix cut off.
func TestStoreUnderPrefix(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
		raw := etcd3test.Start(t)
		ns := clientv3.NewCtxClient(context.Background())
		ns.KV = namespace.NewKV(raw.KV, "/clusters/1")
		ns.Watcher = namespace.NewWatcher(raw.Watcher, "/clusters/1")
		// A neighbour with a key inside the Store's range, were the
		// prefix not cut.
		if _, err := raw.Put(context.Background(), "/clusters/2"+configMaps.Key("ns", "other"), "{}"); err != nil {
			t.Fatal(err)
		}
		store := etcd3.New(etcd3.Config{Client: ns, Watcher: raw.Watcher, WatchPrefix: "/clusters/1"})
		return storagetest.Fixture{Store: store, Keys: configMaps, Client: ns}
	})
}

// TestStoreSingleMemberReads runs the suite with every Get serializable,
// as a server over its own member (or a logical cluster over a shared
// one, namespaced as here) reads: the member is the whole cluster, so
// its applied state is every acknowledged write.
func TestStoreSingleMemberReads(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Fixture {
		raw := etcd3test.Start(t)
		ns := clientv3.NewCtxClient(context.Background())
		ns.KV = etcd3.SingleMemberReads(namespace.NewKV(raw.KV, "/clusters/1"))
		store := etcd3.New(etcd3.Config{Client: ns, Watcher: raw.Watcher, WatchPrefix: "/clusters/1"})
		return storagetest.Fixture{Store: store, Keys: configMaps, Client: ns}
	})
}

// recordingKV records the Gets and Dos made through it.
type recordingKV struct {
	clientv3.KV
	gets, dos []clientv3.Op
}

func (kv *recordingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	kv.gets = append(kv.gets, clientv3.OpGet(key, opts...))
	return kv.KV.Get(ctx, key, opts...)
}

func (kv *recordingKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	kv.dos = append(kv.dos, op)
	return kv.KV.Do(ctx, op)
}

// TestSingleMemberReadsOnlyGets checks what SingleMemberReads changes:
// Gets become serializable, and Ready, which must find a leader, still
// reads linearizably.
func TestSingleMemberReadsOnlyGets(t *testing.T) {
	raw := etcd3test.Start(t)
	ctx := testContext(t)
	rec := &recordingKV{KV: raw.KV}
	c := clientv3.NewCtxClient(ctx)
	c.KV = etcd3.SingleMemberReads(rec)
	if _, err := c.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(ctx, "/k", clientv3.WithKeysOnly())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get after put: %v, %v", resp, err)
	}
	if len(rec.gets) != 1 || !rec.gets[0].IsSerializable() || !rec.gets[0].IsKeysOnly() {
		t.Errorf("the Get was not made serializable with its own options: %+v", rec.gets)
	}
	if err := etcd3.Ready(ctx, c); err != nil {
		t.Fatal(err)
	}
	if len(rec.dos) != 1 || rec.dos[0].IsSerializable() {
		t.Errorf("Ready's read was not linearizable: %+v", rec.dos)
	}
}

// TestRequestProgressReachesWatch proves Watch and RequestProgress share a
// gRPC stream: an idle watch asked for progress notifications gets a
// Bookmark at etcd's current revision after one RequestProgress, long
// before etcd's periodic notification (10 minutes) would come. The request
// is made right after Watch returns, when etcd may not have the watch yet
// or may still be syncing it, and would drop a single request.
func TestRequestProgressReachesWatch(t *testing.T) {
	for _, loopback := range []bool{false, true} {
		name := "inprocess"
		if loopback {
			name = "loopback"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			emb := etcd3test.StartEmbedded(t)
			client := emb.Client
			if loopback {
				var err error
				if client, err = etcd3.NewClient(etcd3.ClientConfig{Endpoints: []string{emb.Endpoint()}}); err != nil {
					t.Fatal(err)
				}
				defer client.Close()
			}
			s := etcd3.New(etcd3.Config{Client: client})
			created, err := s.Create(ctx, configMaps.Key("ns", "a"), configMap("a", nil))
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.Watch(ctx, configMaps.Prefix(), storage.WatchOptions{ResourceVersion: "0", ProgressNotify: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			// Writes elsewhere move the revision past anything the
			// watch has seen, as writes to other resources do: the
			// cacher's question is whether it has caught up with them.
			var put *clientv3.PutResponse
			for range 3 {
				if put, err = client.Put(ctx, "/elsewhere", "x"); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.RequestProgress(ctx); err != nil {
				t.Fatal(err)
			}
			if ev := next(t, w); ev.Type != storage.Added || ev.Object.Revision != created.Revision {
				t.Fatalf("first event %s, want the initial ADDED", ev.Type)
			}
			ev := next(t, w)
			if ev.Type != storage.Bookmark || ev.Object == nil {
				t.Fatalf("event %v, want a progress BOOKMARK", ev.Type)
			}
			if ev.Object.Revision != put.Header.Revision {
				t.Fatalf("bookmark at revision %d, want the current %d", ev.Object.Revision, put.Header.Revision)
			}
		})
	}
}

// TestRequestProgressPerStore: two Stores on one client watch on separate
// streams, so one Store's progress request reaches its own watches only.
func TestRequestProgressPerStore(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	a := etcd3.New(etcd3.Config{Client: client})
	b := etcd3.New(etcd3.Config{Client: client})
	wa, wb := watchTwo(ctx, t, a, b)
	progressTo(ctx, t, client, b, wb)
	// Had b's request reached a's stream, a's first event would be a
	// bookmark at b's revision.
	progressTo(ctx, t, client, a, wa)
}

// watchTwo watches ConfigMaps through a and Secrets through b, both
// asking for progress notifications, until the test ends.
func watchTwo(ctx context.Context, t *testing.T, a, b *etcd3.Store) (wa, wb storage.Watcher) {
	t.Helper()
	opts := storage.WatchOptions{ResourceVersion: "0", ProgressNotify: true}
	wa, err := a.Watch(ctx, configMaps.Prefix(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wa.Stop)
	wb, err = b.Watch(ctx, "/registry/core/secrets/", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wb.Stop)
	return wa, wb
}

// progressTo writes a key elsewhere, asks s for progress, and checks
// that w's next event is a bookmark at the write's revision.
func progressTo(ctx context.Context, t *testing.T, client *clientv3.Client, s *etcd3.Store, w storage.Watcher) {
	t.Helper()
	put, err := client.Put(ctx, "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestProgress(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != storage.Bookmark || ev.Object.Revision != put.Header.Revision {
		t.Fatalf("watch got %v, want a bookmark at %d", ev.Type, put.Header.Revision)
	}
}

// TestRewatchDeliversEventsBeforeProgress re-opens a watch from a past
// revision, as the cacher does after a watch error, while progress is
// asked for all along (as consistent reads do):
// the new watch must deliver the event it starts from before any
// Bookmark at or past it. When a Store's watches shared one etcd
// stream, etcd could hand the new watch a progress notification it had
// queued for the old one before the new one existed (its creation and
// that notification go out in either order), a Bookmark past an event
// never delivered: the cache then skipped the event (another watch of
// the Store keeping the stream open). Several Stores run
// at once to make rounds cheap; each round waits for etcd's catch-up of
// the new watch (up to 100 ms).
func TestRewatchDeliversEventsBeforeProgress(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	const stores, rounds = 6, 20
	var wg sync.WaitGroup
	for i := range stores {
		s := etcd3.New(etcd3.Config{Client: client})
		prefix := fmt.Sprintf("/registry/kind%d/", i)
		wg.Go(func() {
			bctx, stop := context.WithCancel(ctx)
			defer stop()
			go func() {
				for bctx.Err() == nil {
					_ = s.RequestProgress(bctx)
				}
			}()
			// Another watch of the Store, open all along, as a
			// watch that bypasses the cache is.
			other, err := s.Watch(ctx, prefix+"other/", storage.WatchOptions{ProgressNotify: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer other.Stop()
			w, err := s.Watch(ctx, prefix, storage.WatchOptions{ProgressNotify: true})
			if err != nil {
				t.Error(err)
				return
			}
			for round := range rounds {
				created, err := s.Create(ctx, fmt.Sprintf("%sns/%d", prefix, round), configMap(fmt.Sprint(round), nil))
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond) // progress requests in flight
				w.Stop()
				w, err = s.Watch(ctx, prefix, storage.WatchOptions{ResourceVersion: fmt.Sprint(created.Revision - 1), ProgressNotify: true})
				if err != nil {
					t.Error(err)
					return
				}
				for {
					var ev storage.Event
					select {
					case ev = <-w.ResultChan():
					case <-time.After(10 * time.Second):
						t.Errorf("%s round %d: no event", prefix, round)
						return
					}
					if ev.Object == nil {
						t.Errorf("%s round %d: %s %v", prefix, round, ev.Type, ev.Err)
						return
					}
					if ev.Type == storage.Bookmark && ev.Object.Revision < created.Revision {
						continue
					}
					if ev.Type != storage.Added || ev.Object.Revision != created.Revision {
						t.Errorf("%s round %d: %s at %d before the create at %d", prefix, round, ev.Type, ev.Object.Revision, created.Revision)
					}
					break
				}
			}
			w.Stop()
		})
	}
	wg.Wait()
}

func next(t *testing.T, w storage.Watcher) storage.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	panic("unreachable")
}

// TestUpdateReencodedIsNoOp: an update function that decodes and
// re-encodes the current object (moving resourceVersion to where the
// registry's encoder puts it) changes nothing, so nothing is written.
func TestUpdateReencodedIsNoOp(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	s := etcd3.New(etcd3.Config{Client: client})
	key := configMaps.Key("ns", "a")
	created, err := s.Create(ctx, key, configMap("a", map[string]string{"x": "y"}))
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	got, err := s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, func(cur *storage.Object) ([]byte, error) {
		calls++
		var obj api.Object
		if err := json.Unmarshal(cur.Data, &obj); err != nil {
			return nil, err
		}
		out, err := json.Marshal(&obj)
		if bytes.Equal(out, cur.Data) {
			t.Error("re-encoding did not move resourceVersion; the test proves nothing")
		}
		return out, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != created.Revision || calls != 1 {
		t.Fatalf("re-encoded update wrote revision %d (created at %d), tryUpdate called %d times", got.Revision, created.Revision, calls)
	}
	rev, err := s.CurrentRevision(ctx)
	if err != nil || rev != created.Revision {
		t.Fatalf("CurrentRevision = %d, %v; want %d (nothing written)", rev, err, created.Revision)
	}
}

// TestStoredValueHasNoResourceVersion checks the bytes in etcd directly.
func TestStoredValueHasNoResourceVersion(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	s := etcd3.New(etcd3.Config{Client: client})
	key := configMaps.Key("ns", "a")
	data, _ := storage.SetResourceVersion(configMap("a", nil), 99)
	if _, err := s.Create(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %v %v", key, resp, err)
	}
	if want := configMap("a", nil); !bytes.Equal(resp.Kvs[0].Value, want) {
		t.Fatalf("stored %s\nwant   %s", resp.Kvs[0].Value, want)
	}
}

// TestConflictRetryUsesTxnElse: a write that lands between the read and
// the transaction makes GuaranteedUpdate retry with the newer object.
func TestConflictRetryUsesTxnElse(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	s := etcd3.New(etcd3.Config{Client: client})
	key := configMaps.Key("ns", "a")
	if _, err := s.Create(ctx, key, configMap("a", nil)); err != nil {
		t.Fatal(err)
	}
	var seen []int64
	var racer *clientv3.PutResponse
	got, err := s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, func(cur *storage.Object) ([]byte, error) {
		seen = append(seen, cur.Revision)
		if len(seen) == 1 {
			var err error
			if racer, err = client.Put(ctx, key, string(configMap("a", map[string]string{"racer": "1"}))); err != nil {
				return nil, err
			}
		}
		return configMap("a", map[string]string{"mine": "1"}), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != racer.Header.Revision {
		t.Fatalf("tryUpdate saw revisions %v, want the original then the racer's %d", seen, racer.Header.Revision)
	}
	if got.Revision <= racer.Header.Revision {
		t.Fatalf("update at revision %d, not after the racer's %d", got.Revision, racer.Header.Revision)
	}
}

func TestCurrentRevisionAndReady(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	s := etcd3.New(etcd3.Config{Client: client})
	created, err := s.Create(ctx, configMaps.Key("ns", "a"), configMap("a", nil))
	if err != nil {
		t.Fatal(err)
	}
	if rev, err := s.CurrentRevision(ctx); err != nil || rev != created.Revision {
		t.Fatalf("CurrentRevision = %d, %v; want %d", rev, err, created.Revision)
	}
	if err := etcd3.Ready(ctx, client); err != nil {
		t.Fatalf("Ready: %v", err)
	}
}

// TestTooLargeObject refuses a write of an object etcd will not store
// as EntityTooLarge, not as an internal error: over etcd's request
// limit (1.5 MiB) through the in-process client, and over the gRPC
// client's largest message (2 MiB) through a loopback one, the path to
// an external cluster. Nothing is written.
func TestTooLargeObject(t *testing.T) {
	emb := etcd3test.StartEmbedded(t)
	loopback, err := etcd3.NewClient(etcd3.ClientConfig{Endpoints: []string{emb.Endpoint()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loopback.Close() })
	ctx := testContext(t)
	big := func(size int) []byte {
		b, err := json.Marshal(map[string]any{"metadata": map[string]any{"name": "big"}, "data": strings.Repeat("x", size)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		client *clientv3.Client
		size   int
	}{
		{"in-process, 1.6 MiB", emb.Client, 1600 << 10},
		{"in-process, 2.9 MiB", emb.Client, 2900 << 10},
		{"loopback, 1.6 MiB", loopback, 1600 << 10},
		{"loopback, 2.9 MiB", loopback, 2900 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := etcd3.New(etcd3.Config{Client: tc.client})
			key := configMaps.Key("ns", "big")
			if _, err := s.Create(ctx, key, big(tc.size)); !storage.IsEntityTooLarge(err) {
				t.Fatalf("Create = %v, want EntityTooLarge", err)
			}
			if _, err := s.Create(ctx, key, big(10)); err != nil {
				t.Fatal(err)
			}
			_, err := s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, func(*storage.Object) ([]byte, error) {
				return big(tc.size), nil
			})
			if !storage.IsEntityTooLarge(err) {
				t.Fatalf("GuaranteedUpdate = %v, want EntityTooLarge", err)
			}
			if _, err := s.Delete(ctx, key, storage.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRunWatch: the watch a consumer runs on its own goroutine (the
// cacher's reflector) hands fn what Watch would send, in order; stops
// when fn says so; passes a compaction's ErrorEvent before it returns;
// and refuses a bad resourceVersion before it starts.
func TestRunWatch(t *testing.T) {
	ctx := testContext(t)
	client := etcd3test.Start(t)
	s := etcd3.New(etcd3.Config{Client: client})
	first, err := s.Create(ctx, "/things/a", []byte(`{"metadata":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/things/b", []byte(`{"metadata":{}}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = s.RunWatch(ctx, "/things/", storage.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr.To(true), AllowBookmarks: true},
		func(ev storage.Event) bool {
			got = append(got, string(ev.Type)+" "+ev.Object.Key)
			return ev.Type != storage.Bookmark
		})
	if want := []string{"ADDED /things/a", "ADDED /things/b", "BOOKMARK "}; err != nil || !slices.Equal(got, want) {
		t.Errorf("RunWatch = %v, events %q; want %q, then stopped by fn", err, got, want)
	}

	third, err := s.Create(ctx, "/things/c", []byte(`{"metadata":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(ctx, third.Revision); err != nil {
		t.Fatal(err)
	}
	var last storage.Event
	err = s.RunWatch(ctx, "/things/", storage.WatchOptions{ResourceVersion: strconv.FormatInt(first.Revision, 10)},
		func(ev storage.Event) bool { last = ev; return true })
	if err != nil || last.Type != storage.ErrorEvent || !storage.IsCompacted(last.Err) {
		t.Errorf("RunWatch from a compacted revision = %v, last event %s %v; want the Compacted ErrorEvent", err, last.Type, last.Err)
	}

	if err := s.RunWatch(ctx, "/things/", storage.WatchOptions{ResourceVersion: "abc"}, func(storage.Event) bool { return true }); err == nil {
		t.Error("RunWatch from resourceVersion abc started")
	}
}

// TestSingleMemberReadsSeeWatchedWrites: a serializable read made on
// hearing of a write from a watch finds that write. etcd tells its
// watchers of a write before it publishes the write's revision to
// readers, so without the watch waiting for that, a controller that
// reads an object on seeing its deletion can still find it.
func TestSingleMemberReadsSeeWatchedWrites(t *testing.T) {
	raw := etcd3test.Start(t)
	ctx := testContext(t)
	c := clientv3.NewCtxClient(ctx)
	c.KV = etcd3.SingleMemberReads(raw.KV)
	const writers, each = 2, 4000
	const writes = writers * each
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := raw.Watch(wctx, "/seen/", clientv3.WithPrefix())
	for w := range writers {
		go func() {
			for i := range each {
				if _, err := raw.Put(ctx, fmt.Sprintf("/seen/%d/%d", w, i%10), "v"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen, stale := 0, 0
	for seen < writes {
		resp, ok := <-events
		if !ok {
			t.Fatalf("the watch ended after %d events", seen)
		}
		for _, ev := range resp.Events {
			seen++
			got, err := c.Get(ctx, string(ev.Kv.Key))
			if err != nil {
				t.Fatal(err)
			}
			if got.Header.Revision < ev.Kv.ModRevision {
				stale++
			}
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d reads made on hearing of a write were older than it", stale, writes)
	}
}

// TestEndedContextStoresNothing: a write whose context has ended before
// it reaches the embedded member is refused with the context's error
// and stores nothing, as through a gRPC client.
func TestEndedContextStoresNothing(t *testing.T) {
	emb := etcd3test.StartEmbedded(t)
	s := etcd3.New(etcd3.Config{Client: emb.Client})
	ended, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for i := range 40 {
		key := configMaps.Key("ns", fmt.Sprint("late-", i))
		if _, err := s.Create(ended, key, []byte(`{"metadata":{"name":"late"}}`)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Create past its deadline = %v, want context.DeadlineExceeded", err)
		}
	}
	// A write raft took is applied before any later one: after this
	// one, every key it took is there to count.
	if _, err := s.Create(testContext(t), configMaps.Key("ns", "marker"), []byte(`{"metadata":{"name":"marker"}}`)); err != nil {
		t.Fatal(err)
	}
	resp, err := emb.Client.Get(testContext(t), "/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 1 {
		t.Errorf("%d keys stored by writes refused", resp.Count-1)
	}
}
