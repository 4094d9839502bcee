// Package versioned serves one stored resource in another API version.
//
// A CustomResourceDefinition may serve several versions of one resource
// while its objects are stored in just one, the storage version. Each
// served version gets its own storage.Interface: a Store from this
// package, layered over the etcd3 store and under that version's cacher.
// On the way in (Create, the bytes GuaranteedUpdate's tryUpdate returns)
// it rewrites apiVersion to the storage version; on the way out (Get,
// List, Watch events, the current object tryUpdate sees) it rewrites
// apiVersion to the served version. That is conversion strategy None, as
// kube-apiserver applies it. Keys carry no version, so every version
// reads and writes the same objects. Built-in kinds that kube stores in
// another version or group (autoscaling/v1 HorizontalPodAutoscalers as
// v2, events.k8s.io Events as core Events) are served the same way, with
// the kind's own conversion (Config.ToStored, Config.ToServed) where more
// than apiVersion differs.
//
// A CRD whose conversion strategy is Webhook converts through its webhook
// (Config.ToStored, Config.ToServed, and Config.ToServedList so that a
// list, or an event with its previous state, is one ConversionReview).
//
// Because the decorator sits below the cacher, each version's cacher
// holds bytes already in its served version: a watch event is converted
// and encoded once per version, and every watcher writes the same bytes.
//
// A conversion that fails is answered as kube-apiserver answers it: on a
// write, a 500 carrying the converter's words; on a read, the stored
// object is reported corrupt ("object not decodable") with 500
// InternalError for one object and 500 StorageReadError for a list; a
// watch ends with an ErrorEvent, and the cacher above retries the event
// until the converter is back, as kube's watch does.
//
//	st := versioned.New(etcd3.New(cfg), versioned.Config{Served: "example.com/v2", Stored: "example.com/v1"})
//	c, err := cacher.New(st, cacherCfg)
package versioned

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kubestorage "k8s.io/apiserver/pkg/storage"
)

// Config says which apiVersions a Store translates between.
type Config struct {
	// Served is the apiVersion clients of this Store see, "group/version".
	Served string
	// Stored is the apiVersion objects are written with: the storage
	// version's.
	Stored string
	// Default, if set, fills defaults into every object read (as generic
	// JSON), after the apiVersion rewrite: a CRD schema's defaults, which
	// kube-apiserver applies when it reads from etcd as well as on
	// writes. Objects are re-encoded in the registry's canonical form. It
	// must be safe for concurrent use.
	Default func(obj map[string]any)
	// ToStored and ToServed, when set, convert an encoded object between
	// the versions instead of rewriting apiVersion: the built-in kinds
	// whose versions differ in shape (autoscaling/v1 and v2
	// HorizontalPodAutoscalers), converted by Kubernetes' own
	// conversions, and CRDs converted by a webhook. They must be safe
	// for concurrent use.
	ToStored, ToServed func(data []byte) ([]byte, error)
	// ToServedList, when set with ToServed, converts several encoded
	// objects at once, returning them in order: a webhook converts a
	// list page, or an event's object and previous state, in one call.
	ToServedList func(data [][]byte) ([][]byte, error)
	// Resource names the resource in the errors of failed conversions.
	Resource api.GroupResource
}

// Store is a storage.Interface that rewrites apiVersion between the
// served and the stored version. It is safe for concurrent use when the
// underlying storage is.
type Store struct {
	under storage.Interface
	cfg   Config
}

var _ storage.Interface = (*Store)(nil)

// New returns under, seen in the served version.
func New(under storage.Interface, cfg Config) *Store {
	return &Store{under: under, cfg: cfg}
}

// CurrentRevision passes through to the underlying storage, so a cacher
// above can still make consistent reads.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	rr, ok := s.under.(storage.RevisionReader)
	if !ok {
		return 0, fmt.Errorf("versioned: underlying storage cannot read the current revision")
	}
	return rr.CurrentRevision(ctx)
}

// RequestProgress passes through to the underlying storage.
func (s *Store) RequestProgress(ctx context.Context) error {
	pr, ok := s.under.(storage.ProgressRequester)
	if !ok {
		return fmt.Errorf("versioned: underlying storage cannot request progress")
	}
	return pr.RequestProgress(ctx)
}

// Get returns the object at key in the served version.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions) (*storage.Object, error) {
	obj, err := s.under.Get(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return s.outOne(obj)
}

// List returns the objects under prefix in the served version. Predicates
// see the stored bytes when only apiVersion differs (they select on
// labels and fields, never on apiVersion), and the served form when the
// versions differ in shape.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.List, error) {
	if attrs := opts.Predicate.Attrs; attrs != nil && s.cfg.ToServed != nil {
		opts.Predicate.Attrs = func(data []byte) (storage.Attrs, error) {
			served, err := s.cfg.ToServed(data)
			if err != nil {
				return storage.Attrs{}, err
			}
			return attrs(served)
		}
	}
	l, err := s.under.List(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	out := *l
	if out.Items, err = s.outAll(l.Items); err != nil {
		return nil, s.listError(l.Items, err)
	}
	return &out, nil
}

// Create stores data in the stored version and returns it as served.
func (s *Store) Create(ctx context.Context, key string, data []byte) (*storage.Object, error) {
	in, err := s.in(data)
	if err != nil {
		return nil, err
	}
	obj, err := s.under.Create(ctx, key, in)
	if err != nil {
		return nil, err
	}
	return s.outOne(obj)
}

// GuaranteedUpdate shows tryUpdate the current object in the served
// version and stores what it returns in the stored version. When
// tryUpdate hands back the served bytes unchanged, the underlying store
// gets its own current bytes back, so it writes nothing.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, tryUpdate storage.UpdateFunc) (*storage.Object, error) {
	obj, err := s.under.GuaranteedUpdate(ctx, key, opts, func(cur *storage.Object) ([]byte, error) {
		var served *storage.Object
		if cur != nil {
			var err error
			if served, err = s.outOne(cur); err != nil {
				return nil, err
			}
		}
		next, err := tryUpdate(served)
		if err != nil {
			return nil, err
		}
		if served != nil && bytes.Equal(next, served.Data) {
			return cur.Data, nil
		}
		return s.in(next)
	})
	if err != nil {
		return nil, err
	}
	return s.outOne(obj)
}

// Delete removes the object at key and returns its last state as served.
func (s *Store) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (*storage.Object, error) {
	if v := opts.Validate; v != nil {
		opts.Validate = func(cur *storage.Object) error {
			served, err := s.outOne(cur)
			if err != nil {
				return err
			}
			return v(served)
		}
	}
	obj, err := s.under.Delete(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return s.outOne(obj)
}

// Delivered asks the storage underneath, whose watches this Store's
// feed (storage.Deliverer); without one, it reports true.
func (s *Store) Delivered(rev int64) bool {
	d, ok := s.under.(storage.Deliverer)
	return !ok || d.Delivered(rev)
}

// Watch streams the changes under prefix in the served version.
func (s *Store) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (storage.Watcher, error) {
	w, err := s.under.Watch(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	vw := &watcher{under: w, cancel: cancel, ch: make(chan storage.Event)}
	go vw.run(ctx, s)
	return vw, nil
}

// watcher translates one underlying watch. Its goroutine is the only
// sender on ch and closes it after the underlying channel closes or
// Stop.
type watcher struct {
	under  storage.Watcher
	cancel context.CancelFunc
	ch     chan storage.Event
}

// ResultChan returns the translated events; it closes after the last.
func (w *watcher) ResultChan() <-chan storage.Event { return w.ch }

// Stop ends the watch; it is idempotent.
func (w *watcher) Stop() {
	w.cancel()
	w.under.Stop()
}

func (w *watcher) run(ctx context.Context, s *Store) {
	defer close(w.ch)
	defer w.under.Stop()
	in := w.under.ResultChan()
	for {
		var ev storage.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-in:
		}
		if !ok {
			return
		}
		if ev.Type != storage.Bookmark && ev.Type != storage.ErrorEvent {
			if err := s.outEvent(&ev); err != nil {
				ev = storage.Event{Type: storage.ErrorEvent, Err: err}
			}
		}
		select {
		case <-ctx.Done():
			return
		case w.ch <- ev:
		}
		if ev.Type == storage.ErrorEvent {
			return
		}
	}
}

// in returns data in the stored version. A conversion that fails is a
// 500 with the converter's words and no reason, as kube-apiserver
// answers a write it cannot convert.
func (s *Store) in(data []byte) ([]byte, error) {
	if s.cfg.ToStored == nil {
		return setAPIVersion(data, s.cfg.Stored)
	}
	out, err := s.cfg.ToStored(data)
	if err != nil {
		return nil, &api.StatusError{ErrStatus: api.Status{Status: api.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}}
	}
	return out, nil
}

// outOne returns obj in the served version; one that does not convert is
// reported as kube-apiserver reports it, a corrupt object (500
// InternalError).
func (s *Store) outOne(obj *storage.Object) (*storage.Object, error) {
	out, err := s.out(obj)
	if err != nil {
		return nil, api.FromKubeError(apierrors.NewInternalError(corrupt(obj, err)))
	}
	return out, nil
}

// outEvent converts an event's object and previous state, together when
// the converter takes several at once.
func (s *Store) outEvent(ev *storage.Event) error {
	if ev.PrevObject == nil || s.cfg.ToServedList == nil {
		var err error
		if ev.Object, err = s.outOne(ev.Object); err == nil && ev.PrevObject != nil {
			ev.PrevObject, err = s.outOne(ev.PrevObject)
		}
		return err
	}
	both, err := s.outAll([]*storage.Object{ev.Object, ev.PrevObject})
	if err != nil {
		return api.FromKubeError(apierrors.NewInternalError(corrupt(ev.Object, err)))
	}
	ev.Object, ev.PrevObject = both[0], both[1]
	return nil
}

// out returns obj in the served version, defaulted.
func (s *Store) out(obj *storage.Object) (*storage.Object, error) {
	if obj == nil || len(obj.Data) == 0 {
		return obj, nil
	}
	var data []byte
	var err error
	if s.cfg.ToServed != nil {
		data, err = s.cfg.ToServed(obj.Data)
	} else {
		data, err = setAPIVersion(obj.Data, s.cfg.Served)
	}
	if err != nil {
		return nil, err
	}
	return s.defaulted(obj, data)
}

// outAll converts objs, in one call when the converter takes several.
func (s *Store) outAll(objs []*storage.Object) ([]*storage.Object, error) {
	out := make([]*storage.Object, len(objs))
	if s.cfg.ToServed == nil || s.cfg.ToServedList == nil {
		for i, o := range objs {
			var err error
			if out[i], err = s.out(o); err != nil {
				return nil, &itemError{obj: o, err: err}
			}
		}
		return out, nil
	}
	var in [][]byte
	for _, o := range objs {
		if o != nil && len(o.Data) > 0 {
			in = append(in, o.Data)
		}
	}
	if len(in) == 0 {
		return objs, nil
	}
	conv, err := s.cfg.ToServedList(in)
	if err != nil {
		return nil, err
	}
	if len(conv) != len(in) {
		return nil, fmt.Errorf("versioned: converted %d objects, want %d", len(conv), len(in))
	}
	for i, o := range objs {
		if o == nil || len(o.Data) == 0 {
			out[i] = o
			continue
		}
		if out[i], err = s.defaulted(o, conv[0]); err != nil {
			return nil, err
		}
		conv = conv[1:]
	}
	return out, nil
}

// defaulted returns obj with data, its served form, defaulted.
func (s *Store) defaulted(obj *storage.Object, data []byte) (*storage.Object, error) {
	if s.cfg.Default != nil {
		var err error
		if data, err = applyDefaults(data, s.cfg.Default); err != nil {
			return nil, err
		}
	}
	return &storage.Object{Key: obj.Key, Revision: obj.Revision, Data: data}, nil
}

// corrupt is kube-apiserver's storage error for a stored object it cannot
// decode into the version asked for.
func corrupt(obj *storage.Object, err error) error {
	return kubestorage.NewCorruptObjError(obj.Key, fmt.Errorf("object not decodable revision=%d: %w", obj.Revision, err))
}

// itemError is the failure to convert one object of several.
type itemError struct {
	obj *storage.Object
	err error
}

func (e *itemError) Error() string { return e.err.Error() }
func (e *itemError) Unwrap() error { return e.err }

// listError answers a list page that did not convert as kube-apiserver
// answers a list with undecodable objects: 500 StorageReadError with a
// cause per object. A converter that took the page at once failed for
// every object it was given.
func (s *Store) listError(items []*storage.Object, err error) error {
	failed := items
	var ie *itemError
	if errors.As(err, &ie) {
		failed, err = []*storage.Object{ie.obj}, ie.err
	}
	var causes []api.StatusCause
	for _, it := range failed {
		if it != nil && len(it.Data) > 0 {
			causes = append(causes, api.StatusCause{Type: "UnexpectedServerResponse", Message: corrupt(it, err).Error(), Field: it.Key})
		}
	}
	if len(causes) == 0 {
		return err
	}
	msg := fmt.Sprintf("failed to read one or more %s from the storage: %s", s.cfg.Resource, causes[0].Message)
	if len(causes) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(causes)-1)
	}
	return &api.StatusError{ErrStatus: api.Status{
		Status: api.StatusFailure, Code: http.StatusInternalServerError, Reason: "StorageReadError", Message: msg,
		Details: &api.StatusDetails{Name: "list", Group: s.cfg.Resource.Group, Kind: s.cfg.Resource.Resource, Causes: causes},
	}}
}

// applyDefaults runs def over data and returns it in api.Object's
// canonical encoding, the one the registry writes.
func applyDefaults(data []byte, def func(map[string]any)) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("versioned: decode object: %w", err)
	}
	def(m)
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("versioned: encode defaulted object: %w", err)
	}
	var obj api.Object
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fmt.Errorf("versioned: decode defaulted object: %w", err)
	}
	return json.Marshal(&obj)
}

// setAPIVersion returns data with its top-level apiVersion set to v. The
// registry writes apiVersion as the first member ({"apiVersion":"...",
// ...}); that form is rewritten in place, keeping every other byte, and
// anything else is decoded and re-encoded.
func setAPIVersion(data []byte, v string) ([]byte, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	const lead = `{"apiVersion":`
	if bytes.HasPrefix(data, []byte(lead)) {
		var cur string
		dec := json.NewDecoder(bytes.NewReader(data[len(lead):]))
		if err := dec.Decode(&cur); err == nil {
			end := len(lead) + int(dec.InputOffset())
			if cur == v {
				return data, nil
			}
			out := make([]byte, 0, len(data)+len(enc))
			out = append(out, lead...)
			out = append(out, enc...)
			return append(out, data[end:]...), nil
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("versioned: decode object: %w", err)
	}
	m["apiVersion"] = enc
	return json.Marshal(m)
}
