package apiextensions

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/miniapi/miniapi/registry"
)

// names are the names in use in one group: resource names (plural,
// singular, short names) and kinds.
type names struct {
	resources, kinds map[string]bool
}

// usedNames collects, per group, the names of the types no CRD serves
// (built-in and file-declared types) and the accepted names of every CRD.
func (c *Controller) usedNames(crds []stored) map[string]*names {
	used := map[string]*names{}
	get := func(g string) *names {
		n := used[g]
		if n == nil {
			n = &names{resources: map[string]bool{}, kinds: map[string]bool{}}
			used[g] = n
		}
		return n
	}
	ours := map[registry.GVR]bool{}
	for _, gvrs := range c.served {
		for _, g := range gvrs {
			ours[g] = true
		}
	}
	for _, res := range c.reg.Snapshot().Resources() {
		t := &res.Type
		if ours[t.GVR()] {
			continue
		}
		n := get(t.Group)
		n.add(Names{Plural: t.Plural, Singular: t.Singular, ShortNames: t.ShortNames, Kind: t.Kind, ListKind: t.ListKind})
	}
	for _, s := range crds {
		get(s.crd.Spec.Group).add(s.crd.Status.AcceptedNames)
	}
	return used
}

func (n *names) add(a Names) {
	for _, r := range append([]string{a.Plural, a.Singular}, a.ShortNames...) {
		if r != "" {
			n.resources[r] = true
		}
	}
	for _, k := range []string{a.Kind, a.ListKind} {
		if k != "" {
			n.kinds[k] = true
		}
	}
}

// acceptNames decides a CRD's accepted names and its NamesAccepted
// condition as kube's naming controller does: a requested name already
// accepted for this CRD is kept; a new one is taken if no other type in
// the group uses it.
func acceptNames(crd *CRD, used *names) (Names, Condition) {
	req, acc := crd.Spec.Names, crd.Status.AcceptedNames
	out := acc
	cond := Condition{Type: NamesAccepted, Status: ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = ConditionFalse, reason, err.Error()
	}
	if err := freshOrOurs(req.Plural, acc.Plural, used.resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		out.Plural = req.Plural
	}
	if err := freshOrOurs(req.Singular, acc.Singular, used.resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		out.Singular = req.Singular
	}
	if !slices.Equal(req.ShortNames, acc.ShortNames) {
		var errs []error
		for _, s := range req.ShortNames {
			if slices.Contains(acc.ShortNames, s) {
				continue
			}
			if err := freshOrOurs(s, "", used.resources); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.Error()
			}
			msg := strings.Join(msgs, ", ")
			if len(msgs) > 1 {
				msg = "[" + msg + "]"
			}
			conflict("ShortNamesConflict", errors.New(msg))
		} else {
			out.ShortNames = req.ShortNames
		}
	}
	if err := freshOrOurs(req.Kind, acc.Kind, used.kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		out.Kind = req.Kind
	}
	if err := freshOrOurs(req.ListKind, acc.ListKind, used.kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		out.ListKind = req.ListKind
	}
	out.Categories = req.Categories
	if cond.Status == ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = ConditionTrue, "NoConflicts", "no conflicts found"
	}
	return out, cond
}

func freshOrOurs(requested, accepted string, used map[string]bool) error {
	if requested == accepted || !used[requested] {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}
