// Command precompress writes gzip (.gz) and brotli (.br) copies of files, at the best
// compression, for static hosts that serve precompressed files (nginx gzip_static and
// brotli_static, Caddy's precompressed, Cloudflare Pages). build.sh runs it on
// dist/main.wasm:
//
//	go run ./cmd/precompress dist/main.wasm
//
// It prints each file's sizes.
package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: precompress FILE...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		if err := compress(name); err != nil {
			fmt.Fprintln(os.Stderr, "precompress:", err)
			os.Exit(1)
		}
	}
}

func compress(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	gz, err := write(name+".gz", data, func(w io.Writer) (io.WriteCloser, error) {
		return gzip.NewWriterLevel(w, gzip.BestCompression)
	})
	if err != nil {
		return err
	}
	br, err := write(name+".br", data, func(w io.Writer) (io.WriteCloser, error) {
		return brotli.NewWriterLevel(w, brotli.BestCompression), nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes, %d gzip, %d brotli\n", name, len(data), gz, br)
	return nil
}

// write compresses data into the file and returns the file's size.
func write(name string, data []byte, open func(io.Writer) (io.WriteCloser, error)) (int64, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	w, err := open(f)
	if err == nil {
		_, err = w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return 0, err
	}
	st, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
