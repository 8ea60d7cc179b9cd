// Package intmap is a hash map from uint64 keys for the per-MAD hot paths
// (the engine's transaction and destination tables, the mux's outstanding
// requests): open addressing with linear probing and backward-shift
// deletion, so an insert and a delete, the pair every MAD pays, touch one
// or two adjacent slots and never allocate once the table has grown to
// its working size. It is several times cheaper than a Go map for that
// insert-lookup-delete churn.
//
// A Map is not safe for concurrent use; its owners guard it with their
// own mutex.
package intmap

import "math/bits"

type slot[V any] struct {
	key  uint64
	val  V
	used bool
}

// Map maps uint64 keys to values of V. The zero Map is empty and ready.
type Map[V any] struct {
	slots []slot[V]
	n     int
	shift uint // 64 - log2(len(slots))
}

// hash spreads k over the table (Fibonacci hashing): sequential keys such
// as TIDs land in distinct slots.
func (m *Map[V]) home(k uint64) int {
	return int((k * 0x9e3779b97f4a7c15) >> m.shift)
}

// Len returns the number of entries.
func (m *Map[V]) Len() int { return m.n }

// Get returns the value for k and whether it is present.
func (m *Map[V]) Get(k uint64) (V, bool) {
	if m.n > 0 {
		mask := len(m.slots) - 1
		for i := m.home(k); ; i = (i + 1) & mask {
			s := &m.slots[i]
			if !s.used {
				break
			}
			if s.key == k {
				return s.val, true
			}
		}
	}
	var zero V
	return zero, false
}

// Set stores v for k.
func (m *Map[V]) Set(k uint64, v V) {
	if (m.n+1)*4 > len(m.slots)*3 {
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if !s.used {
			*s = slot[V]{key: k, val: v, used: true}
			m.n++
			return
		}
		if s.key == k {
			s.val = v
			return
		}
	}
}

// Delete removes k and reports whether it was present.
func (m *Map[V]) Delete(k uint64) bool {
	if m.n == 0 {
		return false
	}
	mask := len(m.slots) - 1
	i := m.home(k)
	for {
		s := &m.slots[i]
		if !s.used {
			return false
		}
		if s.key == k {
			break
		}
		i = (i + 1) & mask
	}
	// Backward-shift: move later entries of the probe run into the hole
	// when the hole lies between their home and where they sit.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := &m.slots[j]
		if !s.used {
			break
		}
		h := m.home(s.key)
		if (j-h)&mask >= (j-i)&mask {
			m.slots[i] = *s
			i = j
		}
	}
	m.slots[i] = slot[V]{}
	m.n--
	return true
}

// All calls f for every entry, in no particular order, until f returns
// false. f must not change m.
func (m *Map[V]) All(f func(k uint64, v V) bool) {
	for i := range m.slots {
		if s := &m.slots[i]; s.used && !f(s.key, s.val) {
			return
		}
	}
}

// Grow makes room for n entries in all, so that filling the map up to n
// does not rehash.
func (m *Map[V]) Grow(n int) {
	size := max(16, len(m.slots))
	for n*4 > size*3 {
		size *= 2
	}
	if size == len(m.slots) {
		return
	}
	old := m.slots
	m.slots = make([]slot[V], size)
	m.shift = uint(64 - bits.TrailingZeros(uint(size)))
	m.n = 0
	for i := range old {
		if old[i].used {
			m.Set(old[i].key, old[i].val)
		}
	}
}

// Clear removes every entry, keeping the table's size.
func (m *Map[V]) Clear() {
	clear(m.slots)
	m.n = 0
}

func (m *Map[V]) grow() { m.Grow(len(m.slots)) } // doubles: Set grows at 3/4 full
