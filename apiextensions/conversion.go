package apiextensions

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/util/webhook"
)

// Converters builds the conversions of CRDs whose conversion strategy is
// Webhook. The converting is kube-apiserver's own webhook converter
// (ConversionReview v1 or v1beta1 as the CRD asks, the CRD's caBundle,
// url or service, its checks of the webhook's answer and its error
// texts); this is the adapter between it and encoded objects. One
// Converters serves every CRD, so webhook clients are shared.
type Converters struct {
	factory *conversion.CRConverterFactory
}

// NewConverters returns Converters that reach a webhook given by service
// through resolver; nil resolves as kube-apiserver does without its
// aggregator, to https://<name>.<namespace>.svc:<port>.
func NewConverters(resolver webhook.ServiceResolver) (*Converters, error) {
	if resolver == nil {
		resolver = webhook.NewDefaultServiceResolver()
	}
	f, err := conversion.NewCRConverterFactory(resolver, nil)
	if err != nil {
		return nil, fmt.Errorf("apiextensions: conversion webhooks: %w", err)
	}
	return &Converters{factory: f}, nil
}

// Converter converts the objects of one served version of a CRD to and
// from its storage version through the CRD's webhook. Its methods are
// the hooks of a storage/versioned.Config; they are safe for concurrent
// use.
type Converter struct {
	conv           runtime.ObjectConvertor
	served, stored schema.GroupVersion
	kind           string
}

// For returns the conversion of t, a type Types built, or nil when t's
// CRD does not convert by webhook (Type.Conversion unset).
func (c *Converters) For(t *registry.Type) (*Converter, error) {
	if len(t.Conversion) == 0 {
		return nil, nil
	}
	var conv apiextensionsv1.CustomResourceConversion
	if err := json.Unmarshal(t.Conversion, &conv); err != nil {
		return nil, fmt.Errorf("apiextensions: conversion of %s: %w", t.GVR(), err)
	}
	if conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return nil, fmt.Errorf("apiextensions: conversion of %s: no webhook client config", t.GVR())
	}
	scope := apiextensionsv1.ClusterScoped
	if t.Namespaced {
		scope = apiextensionsv1.NamespaceScoped
	}
	// The converter needs the CRD's name (its webhook client's and its
	// metrics' label), its versions (it refuses others) and its
	// conversion; a type carries all three.
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: t.Plural + "." + t.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:      t.Group,
			Names:      apiextensionsv1.CustomResourceDefinitionNames{Plural: t.Plural, Singular: t.Singular, Kind: t.Kind, ListKind: t.ListKind},
			Scope:      scope,
			Conversion: &conv,
		},
	}
	versions := slices.Sorted(func(yield func(string) bool) {
		for v := range t.VersionSchemas {
			if !yield(v) {
				return
			}
		}
	})
	if !slices.Contains(versions, t.Version) {
		versions = append(versions, t.Version)
	}
	for _, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: v == t.StorageVersion})
	}
	// The unsafe converter may change its input: each call here converts
	// objects decoded for it alone.
	_, unsafe, err := c.factory.NewConverter(crd)
	if err != nil {
		return nil, fmt.Errorf("apiextensions: conversion of %s: %w", t.GVR(), err)
	}
	return &Converter{
		conv:   unsafe,
		served: schema.GroupVersion{Group: t.Group, Version: t.Version},
		stored: schema.GroupVersion{Group: t.Group, Version: t.StorageVersion},
		kind:   t.Kind,
	}, nil
}

// ToVersion converts an object to version, any of the CRD's versions (as
// admission asks, for a webhook registered for another version).
func (c *Converter) ToVersion(data []byte, version string) ([]byte, error) {
	return c.convert(data, schema.GroupVersion{Group: c.served.Group, Version: version})
}

// ToStored converts an object to the storage version.
func (c *Converter) ToStored(data []byte) ([]byte, error) { return c.convert(data, c.stored) }

// ToServed converts an object to the served version. An object already in
// it (one stored while this was the storage version) is returned as it
// is, without calling the webhook.
func (c *Converter) ToServed(data []byte) ([]byte, error) { return c.convert(data, c.served) }

// ToServedList converts objects to the served version in one
// ConversionReview, as kube-apiserver converts a list; objects already
// in the served version are not sent.
func (c *Converter) ToServedList(data [][]byte) ([][]byte, error) {
	list := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, len(data))}
	for i, d := range data {
		if err := list.Items[i].UnmarshalJSON(d); err != nil {
			return nil, fmt.Errorf("apiextensions: decode object to convert: %w", err)
		}
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	// The list's own kind only names the conversion in errors: the
	// objects', as kube-apiserver converting them one by one says.
	list.SetAPIVersion(list.Items[0].GetAPIVersion())
	list.SetKind(c.kind)
	out, err := c.conv.ConvertToVersion(list, c.served)
	if err != nil {
		return nil, err
	}
	conv, ok := out.(*unstructured.UnstructuredList)
	if !ok || len(conv.Items) != len(data) {
		return nil, fmt.Errorf("apiextensions: conversion returned %T", out)
	}
	res := make([][]byte, len(conv.Items))
	for i := range conv.Items {
		if res[i], err = canonical(&conv.Items[i]); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (c *Converter) convert(data []byte, to schema.GroupVersion) ([]byte, error) {
	var tm api.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("apiextensions: decode object to convert: %w", err)
	}
	if tm.APIVersion == to.String() {
		return data, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("apiextensions: decode object to convert: %w", err)
	}
	out, err := c.conv.ConvertToVersion(u, to)
	if err != nil {
		return nil, err
	}
	conv, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("apiextensions: conversion returned %T", out)
	}
	return canonical(conv)
}

// canonical encodes a converted object as the registry encodes objects,
// so that an update which changes nothing compares equal to what it was
// shown.
func canonical(u *unstructured.Unstructured) ([]byte, error) {
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("apiextensions: encode converted object: %w", err)
	}
	var obj api.Object
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fmt.Errorf("apiextensions: decode converted object: %w", err)
	}
	return json.Marshal(&obj)
}
