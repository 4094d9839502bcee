// Package admission is kube-apiserver's admission chain behind the
// registry's Admission interface: kube's own plugins (the webhooks, the
// admission policies, and the built-in ones such as ServiceAccount,
// LimitRanger or PodSecurity), built, ordered, configured and initialized
// as kube-apiserver does, running on the Store's writes.
//
// The Store hands it plain objects (api.Object). A plugin that looks at
// the object gets it as kube-apiserver would give it: a built-in kind's
// as kube's internal Go type, any other as unstructured JSON. The
// conversion happens only when a plugin asks for the object, and a
// mutated object is converted back once, so a write that no plugin
// touches pays for none of it.
package admission
