package storagetest

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/miniapi/miniapi/storage"
)

func testCreateThenGet(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", uid: "uid-a", value: "one"}
	created := f.create(t, o)
	checkObject(t, created, o)
	if created.Key != f.key(o) {
		t.Errorf("Key = %q, want %q", created.Key, f.key(o))
	}
	got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	checkObject(t, got, o)
	if got.Revision != created.Revision || !bytes.Equal(got.Data, created.Data) {
		t.Fatalf("Get = %d %s, want what Create returned: %d %s", got.Revision, got.Data, created.Revision, created.Data)
	}
	// A resourceVersion sent with the object is not stored: the
	// object's resourceVersion is always its revision.
	o2 := object{ns: "ns", name: "b", value: "two"}
	withRV, err := storage.SetResourceVersion(o2.encode(), 1)
	if err != nil {
		t.Fatal(err)
	}
	created2, err := f.Store.Create(testContext(t), f.key(o2), withRV)
	if err != nil {
		t.Fatalf("Create with a resourceVersion: %v", err)
	}
	checkObject(t, created2, o2)
	if created2.Revision <= created.Revision {
		t.Fatalf("second create at revision %d, first at %d", created2.Revision, created.Revision)
	}
}

func testCreateExisting(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	first := f.create(t, o)
	_, err := f.Store.Create(testContext(t), f.key(o), object{ns: "ns", name: "a", value: "two"}.encode())
	if !storage.IsExists(err) {
		t.Fatalf("second Create: %v, want Exists", err)
	}
	got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{})
	if err != nil || got.Revision != first.Revision {
		t.Fatalf("after a failed create: %v %v, want the first object unchanged", got, err)
	}
	checkObject(t, got, o)
}

func testGetMissing(t *testing.T, f Fixture) {
	_, err := f.Store.Get(testContext(t), f.Keys.Key("ns", "missing"), storage.GetOptions{})
	if !storage.IsNotFound(err) {
		t.Fatalf("Get missing: %v, want NotFound", err)
	}
}

func testGetResourceVersions(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	created := f.create(t, o)
	// "0" accepts any state the backend holds, so it is read after N, which
	// waits for a state at least as new as the write.
	for _, rv := range []string{"", strconv.FormatInt(created.Revision, 10), "0"} {
		got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatalf("Get with resourceVersion %q: %v", rv, err)
		}
		checkObject(t, got, o)
	}
	for _, rv := range []string{"abc", "-1", "1.5"} {
		_, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{ResourceVersion: rv})
		if !storage.IsInvalid(err) {
			t.Errorf("Get with resourceVersion %q: %v, want Invalid", rv, err)
		}
	}
}

func testGetTooLargeResourceVersion(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	created := f.create(t, o)
	rv := strconv.FormatInt(created.Revision+1000, 10)
	_, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{ResourceVersion: rv})
	if !storage.IsTooLargeResourceVersion(err) {
		t.Fatalf("Get at resourceVersion %s (current %d): %v, want TooLargeResourceVersion", rv, created.Revision, err)
	}
}

func testUpdateHappyPath(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	created := f.create(t, o)
	calls := 0
	updated, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{},
		func(cur *storage.Object) ([]byte, error) {
			calls++
			if cur == nil || cur.Revision != created.Revision || !bytes.Equal(cur.Data, created.Data) {
				t.Errorf("tryUpdate got %v, want the created object", cur)
			}
			return withValue(t, cur.Data, "two"), nil
		})
	if err != nil {
		t.Fatalf("GuaranteedUpdate: %v", err)
	}
	if calls != 1 {
		t.Errorf("tryUpdate called %d times without contention", calls)
	}
	o.value = "two"
	checkObject(t, updated, o)
	if updated.Revision <= created.Revision {
		t.Fatalf("update revision %d not after create revision %d", updated.Revision, created.Revision)
	}
	got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{})
	if err != nil || got.Revision != updated.Revision || !bytes.Equal(got.Data, updated.Data) {
		t.Fatalf("Get after update = %v %v, want the updated object", got, err)
	}
}

func testUpdateNoOp(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	created := f.create(t, o)
	before := f.etcdRevision(t)
	got, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{},
		func(cur *storage.Object) ([]byte, error) { return cur.Data, nil })
	if err != nil {
		t.Fatalf("no-op GuaranteedUpdate: %v", err)
	}
	if got.Revision != created.Revision || !bytes.Equal(got.Data, created.Data) {
		t.Fatalf("no-op update returned revision %d %s, want the current object at %d", got.Revision, got.Data, created.Revision)
	}
	if after := f.etcdRevision(t); after != before {
		t.Fatalf("no-op update moved etcd from revision %d to %d", before, after)
	}
}

func testUpdateConcurrent(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "counter", value: "0"}
	f.create(t, o)
	const workers, perWorker = 10, 5
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range perWorker {
				_, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{},
					func(cur *storage.Object) ([]byte, error) {
						v, err := valueOf(cur.Data)
						if err != nil {
							return nil, err
						}
						n, err := strconv.Atoi(v)
						if err != nil {
							return nil, err
						}
						return setValue(cur.Data, strconv.Itoa(n+1))
					})
				if err != nil {
					t.Errorf("GuaranteedUpdate: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := decode(t, got.Data).value; v != strconv.Itoa(workers*perWorker) {
		t.Fatalf("counter = %s after %d concurrent increments", v, workers*perWorker)
	}
}

func testUpdatePreconditions(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", uid: "uid-a", value: "one"}
	created := f.create(t, o)
	str := func(s string) *string { return &s }
	curRV := strconv.FormatInt(created.Revision, 10)
	for _, tc := range []struct {
		name string
		p    storage.Preconditions
	}{
		{"uid", storage.Preconditions{UID: str("uid-other")}},
		{"resourceVersion", storage.Preconditions{ResourceVersion: str(strconv.FormatInt(created.Revision-1, 10))}},
		{"uid with matching resourceVersion", storage.Preconditions{UID: str("uid-other"), ResourceVersion: str(curRV)}},
	} {
		called := false
		_, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{Preconditions: &tc.p},
			func(cur *storage.Object) ([]byte, error) { called = true; return withValue(t, cur.Data, "x"), nil })
		if !storage.IsConflict(err) {
			t.Errorf("%s precondition mismatch: %v, want Conflict", tc.name, err)
		}
		if called {
			t.Errorf("%s precondition mismatch: tryUpdate was called", tc.name)
		}
	}
	updated, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o),
		storage.UpdateOptions{Preconditions: &storage.Preconditions{UID: str("uid-a"), ResourceVersion: str(curRV)}},
		func(cur *storage.Object) ([]byte, error) { return withValue(t, cur.Data, "two"), nil })
	if err != nil {
		t.Fatalf("update with matching preconditions: %v", err)
	}
	o.value = "two"
	checkObject(t, updated, o)
}

func testUpdateMissing(t *testing.T, f Fixture) {
	_, err := f.Store.GuaranteedUpdate(testContext(t), f.Keys.Key("ns", "missing"), storage.UpdateOptions{},
		func(cur *storage.Object) ([]byte, error) {
			t.Error("tryUpdate called for a missing object")
			return nil, errors.New("unexpected")
		})
	if !storage.IsNotFound(err) {
		t.Fatalf("update of a missing object: %v, want NotFound", err)
	}
}

func testUpdateIgnoreNotFound(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "made"}
	created, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{IgnoreNotFound: true},
		func(cur *storage.Object) ([]byte, error) {
			if cur != nil {
				t.Errorf("tryUpdate got %v for a missing object, want nil", cur)
			}
			return o.encode(), nil
		})
	if err != nil {
		t.Fatalf("create through update: %v", err)
	}
	checkObject(t, created, o)
	got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{})
	if err != nil || got.Revision != created.Revision {
		t.Fatalf("Get after create through update: %v %v", got, err)
	}
}

func testUpdateErrorAsIs(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	created := f.create(t, o)
	sentinel := errors.New("registry says no")
	_, err := f.Store.GuaranteedUpdate(testContext(t), f.key(o), storage.UpdateOptions{},
		func(*storage.Object) ([]byte, error) { return nil, sentinel })
	if err != sentinel {
		t.Fatalf("GuaranteedUpdate returned %v (%T), want tryUpdate's error itself", err, err)
	}
	got, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{})
	if err != nil || got.Revision != created.Revision {
		t.Fatalf("object changed by an aborted update: %v %v", got, err)
	}
}

func testDeletePreconditions(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", uid: "uid-a", value: "one"}
	created := f.create(t, o)
	updated := f.update(t, o, "two")
	o.value = "two"
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		p    storage.Preconditions
	}{
		{"uid", storage.Preconditions{UID: str("uid-other")}},
		{"resourceVersion", storage.Preconditions{ResourceVersion: str(strconv.FormatInt(created.Revision, 10))}},
	} {
		_, err := f.Store.Delete(testContext(t), f.key(o), storage.DeleteOptions{Preconditions: &tc.p})
		if !storage.IsConflict(err) {
			t.Errorf("delete with mismatched %s: %v, want Conflict", tc.name, err)
		}
	}
	if _, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{}); err != nil {
		t.Fatalf("object gone after failed deletes: %v", err)
	}
	deleted, err := f.Store.Delete(testContext(t), f.key(o), storage.DeleteOptions{
		Preconditions: &storage.Preconditions{UID: str("uid-a"), ResourceVersion: str(strconv.FormatInt(updated.Revision, 10))},
	})
	if err != nil {
		t.Fatalf("delete with matching preconditions: %v", err)
	}
	checkObject(t, deleted, o)
	if deleted.Revision <= updated.Revision {
		t.Fatalf("deleted object has revision %d, want the deletion's (after %d)", deleted.Revision, updated.Revision)
	}
	if rev := f.etcdRevision(t); deleted.Revision != rev {
		t.Fatalf("deleted object has revision %d, etcd is at %d after the delete", deleted.Revision, rev)
	}
	if _, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{}); !storage.IsNotFound(err) {
		t.Fatalf("Get after delete: %v, want NotFound", err)
	}
}

func testDeleteMissing(t *testing.T, f Fixture) {
	_, err := f.Store.Delete(testContext(t), f.Keys.Key("ns", "missing"), storage.DeleteOptions{})
	if !storage.IsNotFound(err) {
		t.Fatalf("Delete missing: %v, want NotFound", err)
	}
}

func testDeleteValidateRejects(t *testing.T, f Fixture) {
	o := object{ns: "ns", name: "a", value: "one"}
	created := f.create(t, o)
	sentinel := errors.New("has finalizers")
	_, err := f.Store.Delete(testContext(t), f.key(o), storage.DeleteOptions{
		Validate: func(cur *storage.Object) error {
			if cur.Revision != created.Revision {
				t.Errorf("Validate got revision %d, want %d", cur.Revision, created.Revision)
			}
			return sentinel
		},
	})
	if !errors.Is(err, sentinel) {
		t.Fatalf("Delete = %v, want Validate's error", err)
	}
	if _, err := f.Store.Get(testContext(t), f.key(o), storage.GetOptions{}); err != nil {
		t.Fatalf("object deleted although Validate rejected it: %v", err)
	}
	if _, err := f.Store.Delete(testContext(t), f.key(o), storage.DeleteOptions{
		Validate: func(*storage.Object) error { return nil },
	}); err != nil {
		t.Fatalf("Delete with accepting Validate: %v", err)
	}
}
