package apiextensions

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	"github.com/miniapi/miniapi/storage/etcd3"
	"github.com/miniapi/miniapi/storage/etcd3/etcd3test"
)

// A CRD deleted before the status recording its accepted names was
// written (that write conflicted with the deletion) is still served under
// the names its types carry: finalizing it must not unserve it.
func TestServingNamesBeforeStatusIsWritten(t *testing.T) {
	client := etcd3test.Start(t)
	reg := registry.New(registry.Config{Storage: func(*registry.Type, storage.ResourceKeys, storage.AttrFunc) (storage.Interface, func() error, error) {
		return etcd3.New(etcd3.Config{Client: client}), nil, nil
	}})
	t.Cleanup(func() { _ = reg.Close() })
	var obj api.Object
	if err := json.Unmarshal([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
		"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`), &obj); err != nil {
		t.Fatal(err)
	}
	crd, err := Decode(&obj)
	if err != nil {
		t.Fatal(err)
	}
	c := NewController(reg, nil)
	served := Names{Plural: "widgets", Singular: "widget", ShortNames: []string{"wd"}, Kind: "Widget", ListKind: "WidgetList", Categories: []string{"all"}}
	if err := c.register(crd.Metadata.Name, Types(crd, served)); err != nil {
		t.Fatal(err)
	}
	if got := c.servingNames(crd.Metadata.Name, Names{}); !reflect.DeepEqual(got, served) {
		t.Errorf("names without accepted names = %+v, want the served %+v", got, served)
	}
	accepted := Names{Plural: "widgets", Kind: "Widget", ListKind: "WidgetList", Singular: "widget"}
	if got := c.servingNames(crd.Metadata.Name, accepted); !reflect.DeepEqual(got, accepted) {
		t.Errorf("names with accepted names = %+v, want them", got)
	}
}
