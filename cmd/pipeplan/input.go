package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"pipeplan/core/load"
)

// readInput reads a file the user named, refusing one over limit bytes before reading
// it: a 300 MB file beyond the planner's bound costs a stat, not seconds and memory. A
// binary input (64 MB of zeros, /dev/zero) is refused from its first bytes
// (core/load.CheckText): every input pipeplan reads is UTF-8 text.
func readInput(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := func(n int64) error {
		return fmt.Errorf("%s: the input is %d bytes; at most %d (%d MiB) are read", path, n, limit, limit>>20)
	}
	var buf bytes.Buffer
	size := int64(-1) // a pipe has no size to stat
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if size = st.Size(); size > int64(limit) {
			return nil, tooBig(size)
		}
	}
	// The first bytes, then the rest: a file that is not text is not read further.
	head := make([]byte, load.SniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	if err := load.CheckTextHead(head[:n], err == nil); err != nil { // err nil: more may follow
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if size >= 0 {
		// One buffer of the file's size: io.ReadAll's doublings cost a 300 MB profile a
		// second of copying and zeroing.
		buf.Grow(int(size) + bytes.MinRead)
	}
	buf.Write(head[:n])
	if _, err := buf.ReadFrom(io.LimitReader(f, int64(limit)+1-int64(n))); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if len(data) > limit {
		return nil, fmt.Errorf("%s: the input is more than %d bytes; at most %d (%d MiB) are read", path, limit, limit, limit>>20)
	}
	return data, nil
}
