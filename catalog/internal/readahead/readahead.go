// Package readahead reads a source ahead of its reader, in a goroutine.
package readahead

import (
	"errors"
	"io"
)

// Reader reads its source in a goroutine of its own, up to chunks chunks of chunkSize bytes ahead of its reader, so
// that producing the source (e.g. decompressing it) overlaps with consuming it. The chunks are reused. Stop it before
// anything else reads the source.
type Reader struct {
	full, free   chan []byte
	cur, last    []byte
	err          error // the source's, once full is closed
	done, exited chan struct{}
}

const chunks, chunkSize = 4, 256 << 10

// ErrStopped is what a Reader reads after Stop, past what it had read ahead.
var ErrStopped = errors.New("readahead: stopped")

// New starts reading r ahead.
func New(r io.Reader) *Reader {
	a := &Reader{full: make(chan []byte, chunks), free: make(chan []byte, chunks),
		done: make(chan struct{}), exited: make(chan struct{})}
	for range chunks {
		a.free <- make([]byte, chunkSize)
	}
	go func() {
		defer close(a.exited)
		defer close(a.full)
		for {
			var buf []byte
			select {
			case <-a.done: // before a free chunk, were both ready
				a.err = ErrStopped
				return
			default:
			}
			select {
			case buf = <-a.free:
			case <-a.done:
				a.err = ErrStopped
				return
			}
			n, err := io.ReadFull(r, buf[:chunkSize])
			if n > 0 {
				a.full <- buf[:n] // never blocks: there are as many chunks as places
			}
			if err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) {
					err = io.EOF
				}
				a.err = err
				return
			}
		}
	}()
	return a
}

// Read reads what the goroutine read; at the end, the source's error (io.EOF at its end).
func (a *Reader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.last != nil {
			a.free <- a.last // never blocks, as above
			a.last = nil
		}
		chunk, ok := <-a.full
		if !ok {
			return 0, a.err // written before full was closed
		}
		a.cur, a.last = chunk, chunk
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Stop ends the goroutine and waits for it: the source is not read any more.
func (a *Reader) Stop() {
	close(a.done)
	<-a.exited
}
