package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// requestDir is the planning request's gate, whose errors name request fields.
const requestDir = "../../core/request"

// dynamicPaths lists, for each error path the gate builds at run time (the Go expression
// as written, in core/request), the request fields it can name. A new expression fails
// TestErrorPathsHaveFlags until it is listed here, so that its paths are checked too.
var dynamicPaths = map[string][]string{
	`"cluster." + f.name`:     {"cluster.devices_per_node", "cluster.link_intra", "cluster.link_inter"},
	`"parallelism." + f.name`: {"parallelism.expert", "parallelism.expert_tensor"},
	// sharding's and experts' field: the one the request gave.
	`field`: {"parallelism.sharding", "parallelism.zero", "parallelism.expert", "parallelism.expert_overlap", "parallelism.expert_tensor"},
	// links' field(i): the preset's link, or the cluster document's link of pair i.
	`field(i)`: {"cluster.link", "cluster.document.links", "cluster.document.devices[1].send"},
	`o.field`:  {"parallelism.overlap_grad_reduce", "parallelism.overlap_param_gather"},
	// PipelineEngineRefusal's and TensorCommRefusal's fields: what framework deepspeed refuses.
	`fe.Path`: {"schedule.name", "parallelism.sharding", "parallelism.overlap_grad_reduce", "parallelism.overlap_param_gather", "parallelism.overlap_tensor_comm"},
	// archPaths' recompute_modules[i]: the module the architecture has no part for.
	`"training." + e.Path`:                             {"training.recompute_modules[0]"},
	`fmt.Sprintf("training.recompute_modules[%d]", i)`: {"training.recompute_modules[0]"},
	// modelField: under the model's source, a document's field or the example.
	`p.modelField("measured_on")`:       {"model.document.measured_on", "model.example"},
	`p.modelField("tokens_per_sample")`: {"model.document.tokens_per_sample", "model.example"},
	`p.modelField("")`:                  {"model.document.layers[0].param_bytes", "model.example"},
	// addPrefixed's prefixes: the sub-paths of the errors put under them.
	`""`:                          nil,                                                                // archPaths' errors: its map's values, listed as q
	`"parallelism"`:               {"parallelism.pipeline", "parallelism.data", "parallelism.tensor"}, // cluster.Topology.Choose's
	`"schedule"`:                  {"schedule.microbatches"},                                          // schedule.Config.Validate's (stages moved to parallelism.pipeline)
	`"model.document"`:            {"model.document.layers[0].forward_seconds"},
	`"cluster.document"`:          {"cluster.document.devices[0].memory_bytes"},
	`"model.architecture.config"`: {"model.architecture.config.hidden_size"},
	// addPrefixed itself, and planError's prefix: the paths above, prefixed.
	`prefix`:         nil,
	`join(fe.Path)`:  nil,
	`q`:              nil, // archPaths: the values of its map, read from the source
	`"profile"`:      nil, // calibrate's (exempt below)
	`under(fe.Path)`: nil, // request.ProfileError's: the profile's fields, under "profile" (exempt below)
	// perDevice's: a device of cluster.devices.
	`fmt.Sprintf("cluster.devices[%d]", i)`: {"cluster.devices[0]"},
	`"request"`:                             nil,
	`"model"`:                               nil,
	`"cluster"`:                             nil,
	`"version"`:                             nil,
	`"events"`:                              nil,
	`"memory_proportion"`:                   nil,
}

// exemptPaths are request fields whose errors never reach the command line's request
// flags, each with why.
var exemptPaths = map[string]string{
	"version":                                "the command line writes the version it reads",
	"model":                                  "the command line asks for one of --model, --example and --hf-config before core",
	"cluster":                                "the command line asks for one of --cluster and --device before core",
	"request":                                "a nil request: Go callers only",
	"parallelism":                            "cluster.Topology.Choose's errors, put under it, all name a field (dynamicPaths)",
	"profile":                                "calibrate's profile: pipeplan calibrate names --model itself",
	"profile.measured_on.name":               "calibrate's profile: pipeplan calibrate names --model itself",
	"cluster.devices":                        "no flag sets it (the page's per-device presets, or a --request file, whose errors keep request paths)",
	"cluster.devices[0]":                     "no flag sets it (the page's per-device presets, or a --request file, whose errors keep request paths)",
	"model.architecture.host_kernel_seconds": "no flag sets it (calibrate's output, in a --request file, whose errors keep request paths)",
	"model.architecture.host_layer_seconds":  "no flag sets it (calibrate's output, in a --request file, whose errors keep request paths)",
}

// gateErrorPaths reads core/request's source and returns every request path its errors
// name: the string literals given to Errors.Add, FieldError.Path and addPrefixed, and the
// expansions of dynamicPaths for the rest. It fails the test on an expression that
// dynamicPaths does not list, and on an entry that no longer occurs.
func gateErrorPaths(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, requestDir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{} // path -> where
	used := map[string]bool{}
	source := func(e ast.Expr) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, e)
		return b.String()
	}
	add := func(e ast.Expr, fn *ast.FuncDecl) {
		where := fset.Position(e.Pos()).String()
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING && lit.Value != `""` {
			paths[strings.Trim(lit.Value, `"`)] = where
			if exp, ok := dynamicPaths[lit.Value]; ok { // a prefix: the paths under it
				used[lit.Value] = true
				for _, p := range exp {
					paths[p] = where
				}
			}
			return
		}
		src := source(e)
		exp, ok := dynamicPaths[src]
		if !ok {
			t.Errorf("%s: an error path built as %s: list the request fields it names in dynamicPaths", where, src)
			return
		}
		used[src] = true
		for _, p := range exp {
			paths[p] = where
		}
		if src == "q" { // a renaming map's values
			ast.Inspect(fn, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					if v, ok := kv.Value.(*ast.BasicLit); ok && v.Kind == token.STRING {
						if k, ok := kv.Key.(*ast.BasicLit); ok && k.Kind == token.STRING {
							paths[strings.Trim(v.Value, `"`)] = fset.Position(v.Pos()).String()
						}
					}
				}
				return true
			})
		}
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					switch x := n.(type) {
					case *ast.CallExpr:
						if s, ok := x.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Add" && len(x.Args) >= 2 {
							add(x.Args[0], fn)
						}
						if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "addPrefixed" && len(x.Args) == 3 {
							add(x.Args[1], fn)
						}
					case *ast.KeyValueExpr:
						if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Path" {
							add(x.Value, fn)
						}
					}
					return true
				})
			}
		}
	}
	for src := range dynamicPaths {
		if !used[src] {
			t.Errorf("dynamicPaths lists %s, which core/request no longer builds an error path with: remove it", src)
		}
	}
	if len(paths) < 40 {
		t.Fatalf("found %d error paths in %s: the scan is broken", len(paths), requestDir)
	}
	return paths
}

// requestFields returns the JSON paths of the request's fields, and the ones that hold a
// document (whose own paths go below them).
func requestFields() (fields, documents map[string]bool) {
	fields, documents = map[string]bool{}, map[string]bool{}
	raw := reflect.TypeOf(json.RawMessage(nil))
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			path := prefix + name
			fields[path] = true
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft == raw:
				documents[path] = true
			case ft.Kind() == reflect.Struct:
				walk(ft, path+".")
			}
		}
	}
	walk(reflect.TypeOf(wire.Request{}), "")
	return fields, documents
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// TestErrorPathsHaveFlags: every field path the planning request's gate puts in an error
// is a request field, and reaches the command line as a flag it registers (flagOf) or as
// the file a document came from (--model, --cluster, --hf-config), unless exemptPaths
// says why it cannot. And every flag flagOf names is registered, for a request field.
func TestErrorPathsHaveFlags(t *testing.T) {
	paths := gateErrorPaths(t)
	fields, documents := requestFields()
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	var f requestFlags
	f.add(fs, true)
	f.modelFile, f.clusterFile, f.hfConfig = "MODEL.json", "CLUSTER.json", "CONFIG.json"
	files := []string{f.modelFile, f.clusterFile, f.hfConfig}
	registered := func(flagName string) bool {
		return strings.HasPrefix(flagName, "--") && fs.Lookup(strings.TrimPrefix(flagName, "--")) != nil
	}
	var sorted []string
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		if why, ok := exemptPaths[p]; ok {
			if why == "" {
				t.Errorf("exemptPaths[%q] gives no reason", p)
			}
			continue
		}
		isField := fields[p]
		for d := range documents {
			isField = isField || strings.HasPrefix(p, d+".")
		}
		if !isField && fields[indexRE.ReplaceAllString(p, "")] {
			isField = true
		}
		if !isField {
			t.Errorf("%s: error path %q is no field of the request", paths[p], p)
			continue
		}
		err := f.flagError(model.Errors{{Path: p, Reason: "r"}})
		es, _ := model.AsFieldErrors(err)
		if len(es) != 1 {
			t.Fatalf("flagError(%q) = %v", p, err)
		}
		got := es[0].Path
		if registered(got) || slices.ContainsFunc(files, func(file string) bool { return strings.HasPrefix(got, file) }) {
			continue
		}
		t.Errorf("%s: error path %q reaches the command line as %q: name its flag in flagOf (or say in exemptPaths why no flag sets it)", paths[p], p, got)
	}
	for p, fl := range flagOf {
		if !registered(fl) {
			t.Errorf("flagOf[%q] = %q, which no request flag registers", p, fl)
		}
		if !fields[p] {
			t.Errorf("flagOf maps %q, which is no field of the request", p)
		}
	}
	for p := range exemptPaths {
		if _, ok := paths[p]; !ok {
			t.Errorf("exemptPaths lists %q, which no error names any more", p)
		}
	}
}
