package kernel

import (
	"errors"
	"sync"
)

// openSet is what a Fabric (its Transports) or a CM device (its
// channels) has open: closed all together, after which nothing is added.
// The zero value is an empty open set; it is safe for concurrent use.
type openSet[T comparable] struct {
	mu     sync.Mutex // guards the fields below
	m      map[T]bool
	closed bool
}

// isClosed reports whether closeAll was called.
func (s *openSet[T]) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// add adds x; it reports false, adding nothing, once the set is closed.
func (s *openSet[T]) add(x T) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.m == nil {
		s.m = map[T]bool{}
	}
	s.m[x] = true
	return true
}

// remove removes x (closed by its owner).
func (s *openSet[T]) remove(x T) {
	s.mu.Lock()
	delete(s.m, x)
	s.mu.Unlock()
}

// closeAll closes the set and, outside its lock, every member with
// close, joining their errors.
func (s *openSet[T]) closeAll(close func(T) error) error {
	s.mu.Lock()
	s.closed = true
	m := s.m
	s.m = nil
	s.mu.Unlock()
	var errs []error
	for x := range m {
		errs = append(errs, close(x))
	}
	return errors.Join(errs...)
}
