package collector

import "io"

// textBuffer is the writer's one buffer: lines are appended to it in place and it is handed
// to the output in large writes, so each byte of the exposition is copied once on its way out
// (a bufio.Writer would take a second copy from the line into its buffer). net/http passes a
// write this large straight to the connection, or to the gzip writer.
type textBuffer struct {
	out io.Writer
	buf []byte
	err error // the first write error; later writes are dropped
}

// textFlushAt is when the buffer is written out: a few lines short of its 64 KiB, so that
// appending a line rarely outgrows it.
const (
	textBufferSize = 64 << 10
	textFlushAt    = textBufferSize - 4<<10
)

func newTextBuffer(out io.Writer) *textBuffer {
	return &textBuffer{out: out, buf: make([]byte, 0, textBufferSize)}
}

// Write appends p, for writers such as expfmt's that need an io.Writer.
func (t *textBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	t.flushFull()
	return len(p), t.err
}

// flushFull writes the buffer out once it is nearly full.
func (t *textBuffer) flushFull() {
	if len(t.buf) >= textFlushAt {
		t.flush()
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
