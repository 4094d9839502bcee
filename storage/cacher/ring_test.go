package cacher

import (
	"slices"
	"testing"
)

func ascend(r *ring[string], rev int64) []int64 {
	var got []int64
	for rv := range r.AscendFrom(rev) {
		got = append(got, rv)
	}
	return got
}

func TestRingAscendFrom(t *testing.T) {
	cases := []struct {
		name     string
		capacity int
		appended []int64
		from     int64
		want     []int64
	}{
		{"empty ring", 4, nil, 1, nil},
		{"empty ring from zero", 4, nil, 0, nil},
		{"before oldest", 4, []int64{5, 7, 9}, 1, []int64{5, 7, 9}},
		{"exactly oldest", 4, []int64{5, 7, 9}, 5, []int64{5, 7, 9}},
		{"between entries", 4, []int64{5, 7, 9}, 6, []int64{7, 9}},
		{"exactly newest", 4, []int64{5, 7, 9}, 9, []int64{9}},
		{"one past newest", 4, []int64{5, 7, 9}, 10, nil},
		{"wrapped, exactly oldest", 3, []int64{1, 2, 3, 4, 5}, 3, []int64{3, 4, 5}},
		{"wrapped, evicted revision", 3, []int64{1, 2, 3, 4, 5}, 2, []int64{3, 4, 5}},
		{"wrapped, one past newest", 3, []int64{1, 2, 3, 4, 5}, 6, nil},
		{"equal revisions", 4, []int64{3, 3, 4}, 3, []int64{3, 3, 4}},
		{"capacity one", 1, []int64{1, 2}, 1, []int64{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing[string](tc.capacity)
			for _, rev := range tc.appended {
				r.Append(rev, "")
			}
			if got := ascend(r, tc.from); !slices.Equal(got, tc.want) {
				t.Fatalf("AscendFrom(%d) = %v, want %v", tc.from, got, tc.want)
			}
		})
	}
}

func TestRingOldestNewestEvict(t *testing.T) {
	r := newRing[string](2)
	if _, _, ok := r.Oldest(); ok {
		t.Fatal("empty ring has an oldest entry")
	}
	if _, _, ok := r.Newest(); ok {
		t.Fatal("empty ring has a newest entry")
	}
	steps := []struct {
		rev            int64
		v              string
		evicted        bool
		evictedRev     int64
		oldest, newest int64
	}{
		{1, "a", false, 0, 1, 1},
		{2, "b", false, 0, 1, 2},
		{3, "c", true, 1, 2, 3},
		{4, "d", true, 2, 3, 4},
	}
	for _, s := range steps {
		old, ev := r.Append(s.rev, s.v)
		if ev != s.evicted || (ev && old.rev != s.evictedRev) {
			t.Fatalf("Append(%d) evicted %v rev %d, want %v %d", s.rev, ev, old.rev, s.evicted, s.evictedRev)
		}
		o, _, _ := r.Oldest()
		n, nv, _ := r.Newest()
		if o != s.oldest || n != s.newest || nv != s.v {
			t.Fatalf("after %d: oldest %d newest %d (%q)", s.rev, o, n, nv)
		}
	}
}

func TestRingAppendDecreasingPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("appending a lower revision did not panic")
		}
	}()
	r := newRing[int](3)
	r.Append(5, 0)
	r.Append(4, 0)
}

func TestRingResize(t *testing.T) {
	cases := []struct {
		name     string
		capacity int
		appended []int64
		resize   int
		want     []int64
	}{
		{"grow keeps all", 2, []int64{1, 2, 3}, 4, []int64{2, 3}},
		{"shrink keeps newest", 4, []int64{1, 2, 3, 4}, 2, []int64{3, 4}},
		{"empty", 2, nil, 8, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing[string](tc.capacity)
			for _, rev := range tc.appended {
				r.Append(rev, "")
			}
			r.Resize(tc.resize)
			if r.Cap() != tc.resize {
				t.Fatalf("Cap = %d", r.Cap())
			}
			if got := ascend(r, 0); !slices.Equal(got, tc.want) {
				t.Fatalf("after resize: %v, want %v", got, tc.want)
			}
			// Appending after a resize wraps correctly.
			for i := range int64(5) {
				r.Append(100+i, "")
			}
			got := ascend(r, 0)
			if len(got) != min(tc.resize, len(tc.want)+5) || got[len(got)-1] != 104 {
				t.Fatalf("after appends: %v", got)
			}
		})
	}
}

func TestRingAscendStopsEarly(t *testing.T) {
	r := newRing[string](4)
	for rev := range int64(4) {
		r.Append(rev+1, "")
	}
	n := 0
	for range r.AscendFrom(0) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("iterated %d", n)
	}
	r.Reset()
	if r.Len() != 0 || len(ascend(r, 0)) != 0 {
		t.Fatal("Reset left entries")
	}
}

// TestRingGrowsWithWhatItHolds: a ring holds no buffer until written,
// grows with its entries up to its capacity, keeps them in order while
// it grows, evicts only once full, and gives its buffer back on Reset.
func TestRingGrowsWithWhatItHolds(t *testing.T) {
	r := newRing[int](100)
	if len(r.buf) != 0 || r.Cap() != 100 {
		t.Fatalf("new ring: buffer of %d, Cap %d; want none and 100", len(r.buf), r.Cap())
	}
	for i := 1; i <= 3; i++ {
		r.Append(int64(i), i)
	}
	if len(r.buf) > 8 {
		t.Errorf("3 entries hold a buffer of %d", len(r.buf))
	}
	for i := 4; i <= 100; i++ {
		if _, evicted := r.Append(int64(i), i); evicted {
			t.Fatalf("append %d evicted before the ring was full", i)
		}
	}
	if old, evicted := r.Append(101, 101); !evicted || old.rev != 1 {
		t.Errorf("append to a full ring evicted %v (%v), want revision 1", old, evicted)
	}
	want := int64(2)
	for rev, v := range r.AscendFrom(0) {
		if rev != want || v != int(want) {
			t.Fatalf("entry %d: %d, want %d", rev, v, want)
		}
		want++
	}
	if want != 102 || len(r.buf) != 100 {
		t.Errorf("after 101 appends: through %d with a buffer of %d, want 101 and 100", want-1, len(r.buf))
	}
	r.Reset()
	if len(r.buf) != 0 || r.Len() != 0 || r.Cap() != 100 {
		t.Errorf("after Reset: buffer %d, Len %d, Cap %d", len(r.buf), r.Len(), r.Cap())
	}
}
