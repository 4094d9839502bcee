package endpoints

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicBecomesInternalErrorStatus(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := recoverPanics(log)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/configmaps", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("code = %d", rec.Code)
	}
	var st struct {
		Kind, Status, Reason, Message string
		Code                          int
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("not a Status: %s", rec.Body)
	}
	if st.Kind != "Status" || st.Reason != "InternalError" || st.Code != 500 || !strings.Contains(st.Message, "boom") {
		t.Fatalf("status = %+v", st)
	}
	if !strings.Contains(logs.String(), "panic in handler") || !strings.Contains(logs.String(), "boom") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}
