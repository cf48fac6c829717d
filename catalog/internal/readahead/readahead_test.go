package readahead

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// What is read through a Reader is its source, byte for byte, whatever its size against the chunks.
func TestReadsTheSource(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, size := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, chunks*chunkSize + 5, 3 * chunks * chunkSize} {
		data := make([]byte, size)
		r.Read(data)
		a := New(iotest.HalfReader(bytes.NewReader(data)))
		if err := iotest.TestReader(a, data); err != nil {
			t.Errorf("%d bytes: %v", size, err)
		}
		a.Stop()
	}
}

// The source's error comes after what was read before it.
func TestSourceError(t *testing.T) {
	failed := errors.New("connection reset")
	data := bytes.Repeat([]byte("x"), chunkSize+10)
	a := New(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(failed)))
	defer a.Stop()
	got, err := io.ReadAll(a)
	if !bytes.Equal(got, data) || !errors.Is(err, failed) {
		t.Errorf("read %d bytes, %v; want %d bytes, then %v", len(got), err, len(data), failed)
	}
}

// Stop waits for a read of the source in progress, and the source is not read once it has returned; past the chunks
// read ahead, Read says ErrStopped.
func TestStop(t *testing.T) {
	src := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{})}
	a := New(src)
	<-src.entered // the goroutine is reading the source
	stopped := make(chan struct{})
	go func() { a.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while the source was being read")
	case <-time.After(200 * time.Millisecond):
	}
	close(src.release)
	<-stopped
	src.mu.Lock()
	src.stopped = true
	src.mu.Unlock()
	if _, err := io.ReadFull(a, make([]byte, 10*chunks*chunkSize)); !errors.Is(err, ErrStopped) {
		t.Errorf("read after Stop: %v, want %v", err, ErrStopped)
	}
	if src.readAfterStop {
		t.Error("the source was read after Stop returned")
	}
}

// blocking is an endless source whose first read waits for release.
type blocking struct {
	entered, release       chan struct{}
	mu                     sync.Mutex
	stopped, readAfterStop bool
}

func (b *blocking) Read(p []byte) (int, error) {
	select {
	case b.entered <- struct{}{}:
		<-b.release
	default:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.readAfterStop = b.readAfterStop || b.stopped
	return len(p), nil
}
