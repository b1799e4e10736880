package main

import (
	"fmt"
	"io"
	"os"
)

// readInput reads a file the user named, refusing one over limit bytes before reading
// it: a 300 MB file beyond the planner's bound costs a stat, not seconds and memory.
func readInput(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := func(n int64) error {
		return fmt.Errorf("%s: the input is %d bytes; at most %d (%d MiB) are read", path, n, limit, limit>>20)
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > int64(limit) {
		return nil, tooBig(st.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1)) // a pipe has no size to stat
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s: the input is more than %d bytes; at most %d (%d MiB) are read", path, limit, limit, limit>>20)
	}
	return data, nil
}
