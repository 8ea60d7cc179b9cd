// Package freeport starts test servers that take their TCP port from a
// command line or a configuration file (Prometheus, slurmctld). Such a
// server cannot be handed a listener, so a port found free may be taken
// by another process before the server binds it; Retry then starts it
// again on another port, a bounded number of times.
package freeport

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrInUse is what a start function's error wraps when its server could
// not bind the port it was given.
var ErrInUse = errors.New("address already in use")

// Tries is how many ports Retry tries at most.
const Tries = 5

// Port returns a loopback TCP port nothing listened on a moment ago.
func Port() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("freeport: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// InUse reports whether a server's log says it could not bind its port
// ("bind: address already in use", slurmctld's "Address already in
// use").
func InUse(log string) bool {
	return strings.Contains(strings.ToLower(log), "address already in use")
}

// Retry calls start with a free port (Port) until start returns nil or
// an error that does not wrap ErrInUse, Tries times at most, and returns
// start's last error; start must have stopped what it started when it
// returns an error.
func Retry(start func(port int) error) error {
	var err error
	for try := 1; try <= Tries; try++ {
		var port int
		if port, err = Port(); err != nil {
			return err
		}
		if err = start(port); !errors.Is(err, ErrInUse) {
			return err
		}
	}
	return fmt.Errorf("freeport: %d ports tried: %w", Tries, err)
}
