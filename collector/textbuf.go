package collector

import "io"

// textBuffer is the writer's one buffer: lines are appended to it in place and it is handed
// to the output in large writes, so each byte of the exposition is copied once on its way out
// (a bufio.Writer would take a second copy from the line into its buffer). net/http passes a
// write this large straight to the connection, or to the gzip writer.
type textBuffer struct {
	out     io.Writer
	buf     []byte
	flushAt int   // the length at which the buffer is written out
	err     error // the first write error; later writes are dropped
}

// The first write goes out at 60 KiB, so the first byte leaves early; every later one at a
// few lines short of 1 MiB, so that appending a line rarely outgrows the buffer. At 100k
// locks (92 MB) a scrape over loopback took a median 91 ms with 1 MiB writes against 92 to
// 104 ms with 256 and 64 KiB ones (docs/benchmarks.md): the system calls' share. A scrape
// holds this one buffer whatever the number of locks, beside its snapshot of the cache (two
// pointers per lock, informer/snapshot.go).
const (
	textBufferSize = 1 << 20
	textFlushAt    = textBufferSize - 4<<10
	firstFlushAt   = 60 << 10
)

func newTextBuffer(out io.Writer) *textBuffer {
	return &textBuffer{out: out, buf: make([]byte, 0, textBufferSize), flushAt: firstFlushAt}
}

// Write appends p, for writers such as expfmt's that need an io.Writer.
func (t *textBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	t.flushFull()
	return len(p), t.err
}

// flushFull writes the buffer out once it is nearly full.
func (t *textBuffer) flushFull() {
	if len(t.buf) >= t.flushAt {
		t.flush()
		t.flushAt = textFlushAt
	}
}

// flush writes the buffer out and empties it.
func (t *textBuffer) flush() error {
	if len(t.buf) > 0 && t.err == nil {
		_, t.err = t.out.Write(t.buf)
	}
	t.buf = t.buf[:0]
	return t.err
}
