package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/miniapi/miniapi/api"
)

func TestWarningsBecomeHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	w, r := withWarnings(rec, httptest.NewRequest("GET", "/", nil))
	api.AddWarning(r.Context(), `unknown field "spec.colour"`)
	api.AddWarning(r.Context(), `unknown field "spec.colour"`)
	api.AddWarning(r.Context(), "line\nbreak")
	w.WriteHeader(http.StatusOK)
	got := rec.Header().Values("Warning")
	want := []string{`299 - "unknown field \"spec.colour\""`, `299 - "line break"`}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Warning headers = %q, want %q", got, want)
	}
	// Without a collector, AddWarning is a no-op.
	api.AddWarning(httptest.NewRequest("GET", "/", nil).Context(), "ignored")
}
