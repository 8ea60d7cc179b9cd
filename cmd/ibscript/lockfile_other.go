//go:build !unix

package main

// lockFile is a no-op where flock(2) does not exist: --exporter.lockfile
// is accepted and not held.
func lockFile(string) (func(), error) { return func() {}, nil }
