package main

import "golang.org/x/sys/unix"

// availableMemory is the memory this process may use: physical memory,
// or its cgroup's memory.max when lower; 0 when unknown.
func availableMemory() uint64 {
	var si unix.Sysinfo_t
	var phys uint64
	if unix.Sysinfo(&si) == nil {
		phys = uint64(si.Totalram) * uint64(si.Unit)
	}
	if cg := cgroupMemoryMax(); cg > 0 && (phys == 0 || cg < phys) {
		return cg
	}
	return phys
}
