package registry

import "testing"

func TestLeaseWrites(t *testing.T) {
	const meta = `"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"my-controller","namespace":"kube-system"}`
	runWriteCases(t, "Lease", []writeCase{
		{
			name:   "leader election lease as client-go writes it",
			body:   `{` + meta + `,"spec":{"holderIdentity":"node-1_0d3b6a1e","leaseDurationSeconds":15,"acquireTime":"2025-06-23T02:57:05.000000Z","renewTime":"2025-06-23T02:57:15.123456Z","leaseTransitions":0}}`,
			fields: map[string]string{"spec": `{"holderIdentity":"node-1_0d3b6a1e","leaseDurationSeconds":15,"acquireTime":"2025-06-23T02:57:05.000000Z","renewTime":"2025-06-23T02:57:15.123456Z","leaseTransitions":0}`},
		},
		{name: "node heartbeat lease", body: `{` + meta + `,"spec":{"holderIdentity":"node-1","leaseDurationSeconds":40,"renewTime":"2025-06-23T02:57:15.123456Z"}}`},
		{name: "empty spec", body: `{` + meta + `,"spec":{}}`},
		{name: "no spec", body: `{` + meta + `}`},
		{
			name:    "duration must be positive",
			body:    `{` + meta + `,"spec":{"leaseDurationSeconds":0}}`,
			invalid: []string{`spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`},
		},
		{
			name:    "transitions must not be negative",
			body:    `{` + meta + `,"spec":{"leaseTransitions":-1}}`,
			invalid: []string{`spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0`},
		},
		{name: "known strategy", body: `{` + meta + `,"spec":{"strategy":"OldestEmulationVersion","preferredHolder":"a"}}`},
		{name: "qualified strategy", body: `{` + meta + `,"spec":{"strategy":"example.com/mine"}}`},
		{
			name:    "unknown strategy",
			body:    `{` + meta + `,"spec":{"strategy":"Newest"}}`,
			invalid: []string{`spec.strategy.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"`},
		},
		{
			name:    "preferredHolder without strategy",
			body:    `{` + meta + `,"spec":{"preferredHolder":"a"}}`,
			invalid: []string{"spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"},
		},
		{
			name:       "duration not a number",
			body:       `{` + meta + `,"spec":{"leaseDurationSeconds":"15"}}`,
			badRequest: `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32`,
		},
		{
			name:       "duration beyond int32",
			body:       `{` + meta + `,"spec":{"leaseDurationSeconds":3000000000}}`,
			badRequest: `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number 3000000000 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32`,
		},
		{
			name:       "renewTime without microseconds",
			body:       `{` + meta + `,"spec":{"renewTime":"2025-06-23T02:57:15Z"}}`,
			badRequest: `Lease in version "v1" cannot be handled as a Lease: parsing time "2025-06-23T02:57:15Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`,
		},
		{
			name:       "spec not an object",
			body:       `{` + meta + `,"spec":[]}`,
			badRequest: `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal array into Go struct field Lease.spec of type v1.LeaseSpec`,
		},
		{
			name:   "unknown top-level fields dropped",
			body:   `{` + meta + `,"status":{"x":1}}`,
			fields: map[string]string{"status": ""},
		},
		{
			name: "update: holder changes hands",
			old:  `{` + meta + `,"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0}}`,
			body: `{` + meta + `,"spec":{"holderIdentity":"b","leaseDurationSeconds":15,"leaseTransitions":1}}`,
		},
		{
			name:    "update: validated like a create",
			old:     `{` + meta + `,"spec":{"holderIdentity":"a","leaseDurationSeconds":15}}`,
			body:    `{` + meta + `,"spec":{"holderIdentity":"a","leaseDurationSeconds":-5}}`,
			invalid: []string{`spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0`},
		},
	})
}
