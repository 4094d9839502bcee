package cacher

import (
	"iter"
	"sort"
)

// ring is a bounded history of values keyed by non-decreasing revision.
// When full, Append overwrites the oldest entry. Its buffer grows with
// what it holds, up to its capacity: a type nobody writes holds none
// (most of a test cluster's 64). It is not safe for concurrent use; the
// watch cache guards it with its mutex.
type ring[T any] struct {
	buf      []ringEntry[T]
	capacity int
	start    int // index of the oldest entry in buf
	n        int // number of entries held
}

type ringEntry[T any] struct {
	rev int64
	v   T
}

func newRing[T any](capacity int) *ring[T] {
	if capacity < 1 {
		capacity = 1
	}
	return &ring[T]{capacity: capacity}
}

// Len is the number of entries held.
func (r *ring[T]) Len() int { return r.n }

// Cap is the number of entries held before Append evicts.
func (r *ring[T]) Cap() int { return r.capacity }

// at returns the i-th oldest entry, 0 <= i < Len.
func (r *ring[T]) at(i int) *ringEntry[T] {
	return &r.buf[(r.start+i)%len(r.buf)]
}

// Append adds v at rev. rev must not be lower than the newest revision
// held; callers feed events in etcd order, so a lower one is a bug and
// panics. When the ring is full the oldest entry is evicted and returned
// with evicted true.
func (r *ring[T]) Append(rev int64, v T) (old ringEntry[T], evicted bool) {
	if r.n > 0 && rev < r.at(r.n-1).rev {
		panic("cacher: ring revisions must not decrease")
	}
	if r.n == len(r.buf) && r.n < r.capacity {
		// Not full: nothing was evicted yet, so the entries start at
		// index 0 and keep their order in a larger buffer.
		buf := make([]ringEntry[T], min(max(2*r.n, 8), r.capacity))
		copy(buf, r.buf[:r.n])
		r.buf, r.start = buf, 0
	}
	if r.n == len(r.buf) {
		old, evicted = r.buf[r.start], true
		r.buf[r.start] = ringEntry[T]{rev: rev, v: v}
		r.start = (r.start + 1) % len(r.buf)
		return old, evicted
	}
	*r.at(r.n) = ringEntry[T]{rev: rev, v: v}
	r.n++
	return old, false
}

// Oldest returns the oldest entry, ok false when the ring is empty.
func (r *ring[T]) Oldest() (rev int64, v T, ok bool) {
	if r.n == 0 {
		return 0, v, false
	}
	e := r.at(0)
	return e.rev, e.v, true
}

// Newest returns the newest entry, ok false when the ring is empty.
func (r *ring[T]) Newest() (rev int64, v T, ok bool) {
	if r.n == 0 {
		return 0, v, false
	}
	e := r.at(r.n - 1)
	return e.rev, e.v, true
}

// AscendFrom yields, oldest first, every entry whose revision is at least
// rev. Revisions are sorted, so it starts with a binary search. The ring
// must not change while the sequence is consumed.
func (r *ring[T]) AscendFrom(rev int64) iter.Seq2[int64, T] {
	return func(yield func(int64, T) bool) {
		first := sort.Search(r.n, func(i int) bool { return r.at(i).rev >= rev })
		for i := first; i < r.n; i++ {
			e := r.at(i)
			if !yield(e.rev, e.v) {
				return
			}
		}
	}
}

// Resize changes the capacity, keeping the newest entries that fit.
func (r *ring[T]) Resize(capacity int) {
	if capacity < 1 {
		capacity = 1
	}
	keep := min(r.n, capacity)
	buf := make([]ringEntry[T], keep, max(keep, min(2*keep, capacity)))
	for i := range keep {
		buf[i] = *r.at(r.n - keep + i)
	}
	r.buf, r.capacity, r.start, r.n = buf[:cap(buf)], capacity, 0, keep
}

// Reset drops every entry and the buffer, keeping the capacity.
func (r *ring[T]) Reset() {
	r.buf, r.start, r.n = nil, 0, 0
}
