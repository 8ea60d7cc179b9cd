package intmap

import (
	"testing"
)

// check compares m with the reference map want.
func check(t *testing.T, m *Map[int], want map[uint64]int) {
	t.Helper()
	if m.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", m.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get(%#x) = %d, %v; want %d, true", k, got, ok, v)
		}
	}
	seen := 0
	m.All(func(k uint64, v int) bool {
		if want[k] != v {
			t.Fatalf("All gave %#x=%d, want %d", k, v, want[k])
		}
		seen++
		return true
	})
	if seen != len(want) {
		t.Fatalf("All visited %d entries, want %d", seen, len(want))
	}
}

func TestChurn(t *testing.T) {
	// The engine's pattern: sequential TIDs, a window of them live.
	var m Map[int]
	want := map[uint64]int{}
	for tid := uint64(1); tid < 5000; tid++ {
		m.Set(tid, int(tid))
		want[tid] = int(tid)
		if tid > 64 {
			if !m.Delete(tid - 64) {
				t.Fatalf("Delete(%d) = false", tid-64)
			}
			delete(want, tid-64)
		}
	}
	check(t, &m, want)
	if m.Delete(1) {
		t.Fatal("Delete of a deleted key = true")
	}
	m.Set(7, 70)
	m.Set(7, 71)
	want[7] = 71
	check(t, &m, want)
	m.Clear()
	check(t, &m, map[uint64]int{})
	if _, ok := m.Get(4999); ok {
		t.Fatal("Get after Clear found an entry")
	}
}

func TestZeroMap(t *testing.T) {
	var m Map[int]
	if _, ok := m.Get(0); ok || m.Delete(0) || m.Len() != 0 {
		t.Fatal("zero Map is not empty")
	}
	m.Set(0, 5) // key 0 is a key like any other
	check(t, &m, map[uint64]int{0: 5})
}

// FuzzOps runs a sequence of operations against a Go map.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 2, 2})
	f.Add([]byte{0, 0, 0, 16, 0, 32, 1, 0, 0, 48, 1, 16})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var m Map[int]
		want := map[uint64]int{}
		for i := 0; i+1 < len(ops); i += 2 {
			// Few distinct keys, some sharing a home slot, so probe runs
			// and backward shifts are exercised.
			k := uint64(ops[i+1]&0x3f) << 58 >> (ops[i+1] >> 6 * 8)
			switch ops[i] % 3 {
			case 0:
				m.Set(k, i)
				want[k] = i
			case 1:
				_, had := want[k]
				if got := m.Delete(k); got != had {
					t.Fatalf("Delete(%#x) = %v, want %v", k, got, had)
				}
				delete(want, k)
			case 2:
				wv, wok := want[k]
				if v, ok := m.Get(k); ok != wok || v != wv {
					t.Fatalf("Get(%#x) = %d, %v; want %d, %v", k, v, ok, wv, wok)
				}
			}
		}
		check(t, &m, want)
	})
}

func BenchmarkChurn(b *testing.B) {
	var m Map[*int]
	v := new(int)
	var tid uint64
	for b.Loop() {
		tid++
		m.Set(tid, v)
		m.Get(tid)
		m.Delete(tid)
	}
}

func BenchmarkChurnGoMap(b *testing.B) {
	m := map[uint64]*int{}
	v := new(int)
	var tid uint64
	for b.Loop() {
		tid++
		m[tid] = v
		_ = m[tid]
		delete(m, tid)
	}
}

func TestGrow(t *testing.T) {
	var m Map[int]
	want := map[uint64]int{}
	for k := range uint64(10) {
		m.Set(k*7, int(k))
		want[k*7] = int(k)
	}
	m.Grow(1000)
	size := len(m.slots)
	if size*3 < 1000*4 {
		t.Fatalf("Grow(1000) left %d slots", size)
	}
	check(t, &m, want)
	for k := range uint64(1000) {
		m.Set(k*7, int(k))
		want[k*7] = int(k)
	}
	if len(m.slots) != size {
		t.Errorf("filling to the size Grow was given rehashed: %d -> %d slots", size, len(m.slots))
	}
	check(t, &m, want)
	m.Grow(5) // never shrinks
	if len(m.slots) != size {
		t.Errorf("Grow(5) changed the size: %d -> %d", size, len(m.slots))
	}
}
