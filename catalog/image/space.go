package image

import (
	"fmt"
	"sync"
)

// Space is disk space shared by the catalog pulls of many Clients (Options.Space), so that pulls in progress
// together do not fill the volume of Options.ScratchDir: a pull reserves each file's size before it writes it, and
// gives the space back when its Catalog is closed or the pull fails. A pull that would pass MaxBytes fails with a
// *SpaceError, which is not a refusal of the content: the pull may be tried again once other pulls are done.
// Safe for concurrent use.
type Space struct {
	// MaxBytes bounds the bytes reserved at once.
	MaxBytes int64

	mu   sync.Mutex
	used int64
}

// SpaceError is a pull stopped because Options.Space was full.
type SpaceError struct {
	Want, Used, Max int64
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("the scratch space for catalog extraction is full: %d more bytes would pass its %d bytes (%d in use by "+
		"pulls in progress); the pull is tried again later", e.Want, e.Max, e.Used)
}

// Used returns the bytes reserved now.
func (s *Space) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func (s *Space) reserve(n int64) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+n > s.MaxBytes {
		return &SpaceError{Want: n, Used: s.used, Max: s.MaxBytes}
	}
	s.used += n
	return nil
}

func (s *Space) release(n int64) {
	if s == nil || n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used -= n
}
