// Command wasmsize says what takes the space in a Go WebAssembly binary: the bytes of
// code per package, from the code section (id 10) and the function names of the custom
// "name" section, and the size of every section. Build without -s -w to keep the names:
//
//	GOOS=js GOARCH=wasm go build -trimpath -o /tmp/main.wasm ./wasm/app
//	go run ./cmd/wasmsize [-n 40] [-funcs PREFIX] /tmp/main.wasm
//
// The data section (id 11: type descriptors, strings, tables, the function table) has no
// names; its size is listed as a whole. The format is the WebAssembly binary format
// (https://webassembly.github.io/spec/core/binary/modules.html): a magic number, a
// version, then sections of an id byte, a LEB128 size and their contents.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	top := flag.Int("n", 40, "packages to list")
	funcs := flag.String("funcs", "", "also list the functions whose names start with this, largest first")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: wasmsize [-n N] [-funcs PREFIX] FILE.wasm")
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err == nil {
		err = report(os.Stdout, data, *top, *funcs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmsize:", err)
		os.Exit(1)
	}
}

// Module is what wasmsize reads of a module.
type Module struct {
	// Sections in order: name ("code", "data", or a custom section's name) and size.
	Sections []Section
	// Funcs are the defined functions: name (from the name section) and body size.
	Funcs []Func
}

// Section is one section of a module: Size bytes of contents, Total with its id and size
// (the linker may pad the size's LEB128).
type Section struct {
	ID          byte
	Name        string
	Size, Total int
}

// Func is one function defined in the module.
type Func struct {
	Name string
	Size int
}

var sectionNames = map[byte]string{1: "type", 2: "import", 3: "function", 4: "table", 5: "memory",
	6: "global", 7: "export", 8: "start", 9: "element", 10: "code", 11: "data", 12: "datacount"}

// Parse reads a module's sections, function sizes and names.
func Parse(data []byte) (*Module, error) {
	if len(data) < 8 || string(data[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	m := &Module{}
	r := &reader{b: data, i: 8}
	imported := 0
	var sizes []int
	names := map[int]string{}
	for r.i < len(r.b) {
		start := r.i
		id := r.byte()
		n := r.uint()
		if r.err != nil || r.i+n > len(r.b) {
			return nil, errors.New("a section runs past the end of the file")
		}
		body := &reader{b: r.b[r.i : r.i+n]}
		r.i += n
		s := Section{ID: id, Name: sectionNames[id], Size: n, Total: r.i - start}
		switch id {
		case 0:
			s.Name = body.name()
			if s.Name == "name" {
				readNames(body, names)
			}
		case 2:
			for k := body.uint(); k > 0 && body.err == nil; k-- {
				body.name()
				body.name()
				kind := body.byte()
				switch kind {
				case 0: // function: type index
					body.uint()
					imported++
				case 1: // table: reftype, limits
					body.byte()
					body.limits()
				case 2: // memory: limits
					body.limits()
				case 3: // global: valtype, mutability
					body.byte()
					body.byte()
				}
			}
		case 10:
			for k := body.uint(); k > 0 && body.err == nil; k-- {
				size := body.uint()
				body.i += size
				sizes = append(sizes, size)
			}
		}
		if body.err != nil {
			return nil, fmt.Errorf("section %s: %w", s.Name, body.err)
		}
		m.Sections = append(m.Sections, s)
	}
	for i, size := range sizes {
		name, ok := names[imported+i]
		if !ok {
			name = fmt.Sprintf("func[%d]", imported+i)
		}
		m.Funcs = append(m.Funcs, Func{Name: name, Size: size})
	}
	return m, nil
}

// readNames reads the function names subsection (id 1) of the name section.
func readNames(r *reader, names map[int]string) {
	for r.i < len(r.b) && r.err == nil {
		id := r.byte()
		n := r.uint()
		end := r.i + n
		if id == 1 {
			for k := r.uint(); k > 0 && r.err == nil; k-- {
				idx := r.uint()
				names[idx] = r.name()
			}
		}
		r.i = end
	}
}

// Package returns the package of a Go function's name as Go's wasm linker writes names
// (the import path with "/" as "_", then "." and the symbol): "encoding_json" for
// "encoding_json.__decodeState_.object", "github.com_vugu_vugu" for
// "github.com_vugu_vugu.__VGNode_.SetInnerHTML", and "type_" for the linker's
// "type_.eq.T" functions. A dot that a domain's top-level name follows ("github.com_")
// is part of the path.
func Package(name string) string {
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return name
	}
	rest := name[i+1:]
	for _, tld := range []string{"com_", "org_", "net_", "io_", "dev_", "in_"} {
		if strings.HasPrefix(rest, tld) {
			if j := strings.IndexByte(rest, '.'); j >= 0 {
				return name[:i+1+j]
			}
		}
	}
	return name[:i]
}

func report(w io.Writer, data []byte, top int, funcs string) error {
	m, err := Parse(data)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d bytes in all\n\nsections:\n", len(data))
	for _, s := range m.Sections {
		fmt.Fprintf(w, "  %-12s %9d\n", s.Name, s.Size)
	}
	byPkg := map[string]int{}
	count := map[string]int{}
	code := 0
	for _, f := range m.Funcs {
		p := Package(f.Name)
		byPkg[p] += f.Size
		count[p]++
		code += f.Size
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool {
		if byPkg[pkgs[i]] != byPkg[pkgs[j]] {
			return byPkg[pkgs[i]] > byPkg[pkgs[j]]
		}
		return pkgs[i] < pkgs[j]
	})
	fmt.Fprintf(w, "\ncode by package (%d functions, %d bytes):\n", len(m.Funcs), code)
	for i, p := range pkgs {
		if i == top {
			rest := 0
			for _, q := range pkgs[i:] {
				rest += byPkg[q]
			}
			fmt.Fprintf(w, "  %9d  (%d more packages)\n", rest, len(pkgs)-i)
			break
		}
		fmt.Fprintf(w, "  %9d %5.1f%% %5d  %s\n", byPkg[p], 100*float64(byPkg[p])/float64(code), count[p], p)
	}
	if funcs != "" {
		var fs []Func
		for _, f := range m.Funcs {
			if strings.HasPrefix(f.Name, funcs) {
				fs = append(fs, f)
			}
		}
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].Size > fs[j].Size })
		fmt.Fprintf(w, "\nfunctions starting with %q:\n", funcs)
		for i, f := range fs {
			if i == top {
				break
			}
			fmt.Fprintf(w, "  %9d  %s\n", f.Size, f.Name)
		}
	}
	return nil
}

// reader reads the binary format's primitives; the first error sticks.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) byte() byte {
	if r.i >= len(r.b) {
		r.err = io.ErrUnexpectedEOF
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

// uint reads an unsigned LEB128 number (at most 32 bits in the sizes and indices read).
func (r *reader) uint() int {
	v, shift := 0, 0
	for {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
		shift += 7
		if shift > 35 {
			r.err = errors.New("a LEB128 number is too long")
			return 0
		}
	}
}

func (r *reader) name() string {
	n := r.uint()
	if r.err != nil || r.i+n > len(r.b) {
		r.err = io.ErrUnexpectedEOF
		return ""
	}
	s := string(r.b[r.i : r.i+n])
	r.i += n
	return s
}

func (r *reader) limits() {
	if r.byte()&1 != 0 {
		r.uint()
	}
	r.uint()
}
