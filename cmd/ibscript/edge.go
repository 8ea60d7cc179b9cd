package main

import (
	"fmt"
	"time"
)

// Bounds of the numeric flags: a value outside is refused with the
// flag's name before anything runs.
const (
	maxRetries = 100              // --retries: tries after the first
	maxTimeout = 10 * time.Minute // --timeout: one MAD try
)

// checkNumbers refuses absurd numbers on the command line (negative ones
// are refused as they are parsed, or here).
func (c *config) checkNumbers() error {
	if c.retries < 0 || c.retries > maxRetries {
		return fmt.Errorf("--retries %d: want 0 to %d", c.retries, maxRetries)
	}
	if c.timeout <= 0 {
		return fmt.Errorf("--timeout %v: want a positive duration per MAD try (a bare number is milliseconds)", c.timeout)
	}
	if c.timeout > maxTimeout {
		return fmt.Errorf("--timeout %v: want at most %v per MAD try (--time-limit bounds the whole run)", c.timeout, maxTimeout)
	}
	if c.timeLimit < 0 {
		return fmt.Errorf("--time-limit %v: want a positive duration", c.timeLimit)
	}
	return nil
}
