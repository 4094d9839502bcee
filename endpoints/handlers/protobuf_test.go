package handlers

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/miniapi/miniapi/storage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

func TestServesProtobuf(t *testing.T) {
	if !servesProtobuf(builtinKind) {
		t.Error("ConfigMap not served in protobuf")
	}
	if servesProtobuf(customKind) || servesProtobuf(nil) {
		t.Error("a custom type is served in protobuf")
	}
}

func TestProtobufRoundTrip(t *testing.T) {
	c := protoCodecs()
	stored := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"7","creationTimestamp":"2024-01-02T03:04:05Z"},"data":{"k":"v"},"binaryData":{"b":"AAEC"}}`)
	pb, err := c.fromJSON(kindOf(builtinKind), stored)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pb, []byte("k8s\x00")) {
		t.Fatalf("no protobuf magic: %q", pb[:8])
	}
	// What client-go decodes is what was stored.
	var cm corev1.ConfigMap
	if _, _, err := protobuf.NewSerializer(c.scheme, c.scheme).Decode(pb, nil, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "a" || cm.ResourceVersion != "7" || cm.Data["k"] != "v" || !bytes.Equal(cm.BinaryData["b"], []byte{0, 1, 2}) ||
		!cm.CreationTimestamp.Equal(&metav1.Time{Time: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}) {
		t.Fatalf("decoded %+v", cm)
	}
	// And back: a protobuf body becomes the JSON the registry reads.
	j, err := c.toJSON(builtinKind, pb)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(j, []byte(`"kind":"ConfigMap"`)) || !bytes.Contains(j, []byte(`"binaryData":{"b":"AAEC"}`)) {
		t.Fatalf("JSON = %s", j)
	}
}

func TestProtoWatchFrame(t *testing.T) {
	f := newFrameEncoder(builtinKind, "")
	f.proto = &output{mediaType: mediaProtobuf}
	obj := &storage.Object{Revision: 3, Data: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"3"}}`)}
	var buf bytes.Buffer
	if err := f.write(&buf, storage.Event{Type: storage.Added, Object: obj}); err != nil {
		t.Fatal(err)
	}
	frame := buf.Bytes()
	n := binary.BigEndian.Uint32(frame)
	if int(n) != len(frame)-4 {
		t.Fatalf("length prefix %d, frame %d bytes", n, len(frame)-4)
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(frame[4:]); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	c := protoCodecs()
	if _, _, err := protobuf.NewSerializer(c.scheme, c.scheme).Decode(ev.Object.Raw, nil, &cm); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "ADDED" || cm.Name != "a" {
		t.Fatalf("event %s %+v", ev.Type, cm)
	}
}

func TestProtoObjectCache(t *testing.T) {
	c := &protoObjectCache{m: map[weak.Pointer[storage.Object]][]byte{}}
	calls := 0
	encode := func() ([]byte, error) { calls++; return []byte{byte(calls)}, nil }
	a, b := &storage.Object{Revision: 1}, &storage.Object{Revision: 2}
	x, _ := c.get(a, encode)
	y, _ := c.get(a, encode)
	if calls != 1 || !bytes.Equal(x, y) {
		t.Fatalf("one object encoded %d times", calls)
	}
	c.get(b, encode)
	if calls != 2 || c.len() != 2 {
		t.Fatalf("%d encodes, %d held; want 2, 2", calls, c.len())
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	// Once the objects are gone, so are their encodings.
	deadline := time.Now().Add(5 * time.Second)
	for c.len() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := c.len(); n != 0 {
		t.Fatalf("%d encodings held after their objects were collected", n)
	}
}
