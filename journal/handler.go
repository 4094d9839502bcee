package journal

import (
	"encoding/json"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Path is where the admin endpoint serves the journal: GET answers a
// List of the entries kept, those after ?since=SEQ if given. The
// server's authorization guards it as any non-resource path.
const Path = "/miniapi/v1/journal"

// List is the admin endpoint's answer.
type List struct {
	Kind string `json:"kind"`
	// Dropped is how many older entries the ring has forgotten.
	Dropped uint64  `json:"dropped"`
	Entries []Entry `json:"entries"`
}

// Handler serves the admin endpoint at Path.
func (j *Journal) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodGet {
			st := apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "journal"}, r.Method).Status()
			st.Kind, st.APIVersion = "Status", "v1"
			w.WriteHeader(int(st.Code))
			json.NewEncoder(w).Encode(st)
			return
		}
		var filters []Filter
		if s := r.URL.Query().Get("since"); s != "" {
			since, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				st := apierrors.NewBadRequest("since must be an entry's seq: " + err.Error()).Status()
				st.Kind, st.APIVersion = "Status", "v1"
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(st)
				return
			}
			filters = append(filters, Since(since))
		}
		json.NewEncoder(w).Encode(List{Kind: "JournalList", Dropped: j.Dropped(), Entries: j.Entries(filters...)})
	})
}
