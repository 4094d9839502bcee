package apiextensions

import "testing"

func TestAcceptNames(t *testing.T) {
	used := func(resources []string, kinds ...string) *names {
		n := &names{resources: map[string]bool{}, kinds: map[string]bool{}}
		for _, r := range resources {
			n.resources[r] = true
		}
		for _, k := range kinds {
			n.kinds[k] = true
		}
		return n
	}
	spec := Names{Plural: "widgets", Singular: "widget", ShortNames: []string{"wd", "wg"}, Kind: "Widget", ListKind: "WidgetList"}
	cases := []struct {
		name       string
		accepted   Names
		used       *names
		wantStatus string
		wantReason string
		wantMsg    string
		wantNames  Names
	}{
		{"fresh", Names{}, used(nil), ConditionTrue, "NoConflicts", "no conflicts found", spec},
		{"plural taken", Names{}, used([]string{"widgets"}), ConditionFalse, "PluralConflict", `"widgets" is already in use`,
			Names{Singular: "widget", ShortNames: []string{"wd", "wg"}, Kind: "Widget", ListKind: "WidgetList"}},
		{"own names are not conflicts", spec, used([]string{"widgets", "widget", "wd", "wg"}, "Widget", "WidgetList"), ConditionTrue, "NoConflicts", "no conflicts found", spec},
		{"short names taken", Names{}, used([]string{"wd", "wg"}), ConditionFalse, "ShortNamesConflict", `["wd" is already in use, "wg" is already in use]`,
			Names{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}},
		{"list kind taken", Names{}, used(nil, "WidgetList"), ConditionFalse, "ListKindConflict", `"WidgetList" is already in use`,
			Names{Plural: "widgets", Singular: "widget", ShortNames: []string{"wd", "wg"}, Kind: "Widget"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crd := &CRD{Spec: Spec{Names: spec}, Status: Status{AcceptedNames: tc.accepted}}
			got, cond := acceptNames(crd, tc.used)
			if cond.Status != tc.wantStatus || cond.Reason != tc.wantReason || cond.Message != tc.wantMsg {
				t.Errorf("condition = %+v", cond)
			}
			if got.Plural != tc.wantNames.Plural || got.Kind != tc.wantNames.Kind || got.ListKind != tc.wantNames.ListKind ||
				len(got.ShortNames) != len(tc.wantNames.ShortNames) {
				t.Errorf("names = %+v, want %+v", got, tc.wantNames)
			}
		})
	}
}
