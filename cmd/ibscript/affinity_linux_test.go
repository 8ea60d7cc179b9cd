package main

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKeepOffACPU: every thread of the process leaves one CPU of those it
// had, and gets it back from undo; a process allowed one CPU keeps it.
func TestKeepOffACPU(t *testing.T) {
	var prev unix.CPUSet
	if err := unix.SchedGetaffinity(0, &prev); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	undo := keepOffACPU()
	if prev.Count() < 2 {
		if undo != nil {
			undo()
			t.Error("keepOffACPU narrowed a one-CPU process")
		}
		return
	}
	if undo == nil {
		t.Fatal("keepOffACPU did nothing with 2 or more CPUs")
	}
	checkThreads(t, prev.Count()-1)
	undo()
	checkThreads(t, prev.Count())
}

// checkThreads fails t unless every thread of the process may run on n
// CPUs.
func checkThreads(t *testing.T, n int) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		var got unix.CPUSet
		if unix.SchedGetaffinity(tid, &got) != nil {
			continue // the thread ended
		}
		if got.Count() != n {
			t.Errorf("thread %d may run on %d CPUs, want %d", tid, got.Count(), n)
		}
	}
}
