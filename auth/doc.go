// Package auth is miniapi's authentication and authorization: kube's own
// authenticators (client certificates, token file, service account
// tokens, anonymous), authorizers (system:masters, RBAC, AlwaysAllow) and
// request filters (request info, authentication, constrained
// impersonation, authorization), assembled as kube-apiserver assembles
// them; the certificates and keys a server makes for itself (EnsurePKI);
// and kube's bootstrap RBAC policy, reconciled at start.
package auth
