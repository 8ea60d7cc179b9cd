package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// keepOffACPU narrows the CPUs this process's threads may run on to all
// it may use now but the highest, when that leaves at least one; it
// returns a func that gives the threads back the CPUs they had, nil when
// it changed nothing. With ibsim on this host its one thread is the
// sweep's bottleneck: GOMAXPROCS alone (leaveACore) still let the
// runtime's threads land on ibsim's CPU now and then, and such a run's
// sweep took 75 ms where others took 54, with ibsim's own CPU time up by
// a sixth (iblinkinfo on a 2,000-node fat tree, 2 CPUs: 3 of 8 runs
// without it, none of 8 with it). With our threads off one CPU the kernel
// keeps ibsim there.
func keepOffACPU() (undo func()) {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil || set.Count() < 2 {
		return nil
	}
	prev := set
	last := -1
	for c := range 1024 { // CPU_SETSIZE
		if set.IsSet(c) {
			last = c
		}
	}
	set.Clear(last)
	if !setAffinity(&set) {
		return nil
	}
	return func() { setAffinity(&prev) }
}

// setAffinity sets set on every thread the process has (sched_setaffinity
// takes a thread); threads started later inherit it from their creator.
// It reports whether any took it.
func setAffinity(set *unix.CPUSet) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	ok := false
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if unix.SchedSetaffinity(tid, set) == nil {
			ok = true
		}
	}
	return ok
}
