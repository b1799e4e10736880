package load_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
)

// Hostile and degenerate input: every case is refused with an error naming the field
// (or, where docs/formats.md gives it one, read with its documented meaning), never read
// as a silent zero, and never at the cost of time or memory out of proportion to the file.

// wantError checks that err is field errors whose text contains want.
func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant it to contain %q", err, want)
		return
	}
	if _, ok := model.AsFieldErrors(err); !ok && !strings.Contains(want, "syntax") && !strings.Contains(want, "unexpected data") {
		t.Errorf("error %q is not field errors", err)
	}
}

func TestNativeModelHostile(t *testing.T) {
	layer := func(fields string) string { return `{"layers": [{"name": "a"}, {"name": "b", ` + fields + `}]}` }
	for _, tc := range []struct{ name, src, want string }{
		{"null number", layer(`"forward_seconds": null`), "layers[1].forward_seconds: must be a number, got null"},
		{"null count", layer(`"param_bytes": null`), "layers[1].param_bytes: must be a number, got null"},
		{"null override", layer(`"recv_bytes": null`), "layers[1].recv_bytes: must be a number, got null"},
		{"null layers", `{"layers": null}`, "layers: must be a JSON array, got null"},
		{"null layer", `{"layers": [{"name": "a"}, null]}`, "layers[1]: must be a JSON object, got null"},
		{"null shared", layer(`"shared": {"code": null}`), `layers[1].shared["code"]: must be a number, got null`},
		{"null name", layer(`"kind": null`), "layers[1].kind: must be a string, got null"},
		{"duplicate key", layer(`"param_bytes": 1, "param_bytes": 2`), "layers[1].param_bytes: is given twice"},
		{"duplicate top key", `{"layers": [{"name": "a"}], "layers": [{"name": "b"}]}`, "layers: is given twice"},
		{"duplicate empty key", layer(`"": 1, "": 2`), `layers[1]."": is given twice`},
		{"duplicate shared key", layer(`"shared": {"code": 1, "code": 2}`), `layers[1].shared["code"]: is given twice`},
		{"duplicate tensor key", layer(`"outputs": [{"id": "x", "bytes": 1, "id": "y"}]`), "layers[1].outputs[0].id: is given twice"},
		{"duplicate name", `{"layers": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}`, `layers[2].name: "a" is already the name of layers[0]`},
		{"duplicate name, other tie group", `{"layers": [{"name": "a", "tie_group": "x"}, {"name": "a", "tie_group": "y"}]}`, `layers[1].name: "a" is already the name of layers[0]`},
		{"missing name", `{"layers": [{"name": "a"}, {"forward_seconds": 1}]}`, "layers[1].name: is missing"},
		{"NaN string", layer(`"forward_seconds": "NaN"`), `layers[1].forward_seconds: must be a number, got a string "NaN"`},
		{"Infinity string", layer(`"backward_seconds": "Infinity"`), `layers[1].backward_seconds: must be a number, got a string "Infinity"`},
		{"-Infinity string", layer(`"forward_seconds": "-Infinity"`), `layers[1].forward_seconds: must be a number, got a string "-Infinity"`},
		{"number as string", layer(`"param_bytes": "12"`), `layers[1].param_bytes: must be a number, got a string "12"`},
		{"overflowing float", layer(`"forward_seconds": 1e400`), "layers[1].forward_seconds: must be a finite number, got 1e400"},
		{"fractional count", layer(`"param_bytes": 1.5`), "layers[1].param_bytes: must be a whole number, got 1.5"},
		{"fractional exponent", layer(`"param_bytes": 1e-3`), "layers[1].param_bytes: must be a whole number, got 1e-3"},
		{"count beyond int64", layer(`"param_bytes": 1e30`), "layers[1].param_bytes: must be a whole number between -2^63 and 2^63-1, got 1e30"},
		{"count beyond the bound", layer(`"param_bytes": 2e18`), "layers[1].param_bytes: must be at most 2^60 bytes, got 2000000000000000000"},
		{"negative whole", layer(`"temporary_bytes": -2e3`), "layers[1].temporary_bytes: must be >= 0, got -2000"},
		{"element not an object", `{"layers": [{"name": "a"}, 0]}`, "layers[1]: must be a JSON object, got a number"},
		{"bool for a number", layer(`"param_bytes": true`), "layers[1].param_bytes: must be a number, got a boolean"},
		{"unknown key", layer(`"params": 1`), `layers[1]: unknown field "params"; expected one of name, kind,`},
		{"stray bracket after the value", `{"layers": [{"name": "a"}]}]`, "unexpected data after the JSON value at line 1, column 28"},
		{"top not an object", `[{"name": "a"}]`, "must be a JSON object, got an array"},
		{"syntax", `{"layers": [{"name": "a",}]}`, "JSON syntax error at line 1, column 26: invalid character '}' looking for beginning of object key string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := load.Model([]byte(tc.src))
			if m != nil {
				t.Errorf("accepted %+v", m.Layers)
			}
			wantError(t, err, tc.want)
		})
	}
}

// Whole numbers written with a fraction or an exponent are read exactly, and calls of one
// layer may share its name within a tie group.
func TestNativeModelMeanings(t *testing.T) {
	m, _, err := load.Model([]byte(`{"layers": [
		{"name": "a", "param_bytes": 1e11, "activation_bytes": 2.50e1, "temporary_bytes": 1152921504606846975.0,
		 "optimizer_bytes": -0.0e5, "exclusive_bytes": 100E-2, "tie_group": "t"},
		{"name": "b", "recv_bytes": 0},
		{"name": "a", "tie_group": "t"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layers[0]
	if l.ParamBytes != 100_000_000_000 || l.ActivationBytes != 25 || l.TemporaryBytes != 1<<60-1 || l.OptimizerBytes != 0 || l.ExclusiveBytes != 1 {
		t.Errorf("decoded %+v", l)
	}
	if r := m.Layers[1].RecvBytes; r == nil || *r != 0 {
		t.Errorf("recv_bytes 0 decoded as %v", r)
	}
}

func TestNativeClusterHostile(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"null memory", `{"devices": [{"memory_bytes": null}]}`, "devices[0].memory_bytes: must be a number, got null"},
		{"null link", `{"devices": [{"memory_bytes": 1}], "host": null}`, "host: must be a JSON object, got null"},
		{"duplicate key", `{"devices": [{"memory_bytes": 1, "memory_bytes": 2}]}`, "devices[0].memory_bytes: is given twice"},
		{"NaN string", `{"devices": [{"memory_bytes": 1, "clock_hz": "NaN"}]}`, `devices[0].clock_hz: must be a number, got a string "NaN"`},
		{"Infinity string", `{"devices": [{"memory_bytes": 1}], "links": [{"bytes_per_second": "Infinity"}]}`, `links[0].bytes_per_second: must be a number, got a string "Infinity"`},
		{"fractional cycles", `{"devices": [{"memory_bytes": 1, "clock_hz": 1e9}], "host": {"gbps": 1, "idle_cycles": 0.5}}`, "host.idle_cycles: must be a whole number, got 0.5"},
		{"fractional memory", `{"devices": [{"memory_bytes": 1.5}]}`, "devices[0].memory_bytes: must be a whole number, got 1.5"},
		{"string bool", `{"devices": [{"memory_bytes": 1}], "host_every_stage": "yes"}`, `host_every_stage: must be true or false, got a string "yes"`},
		{"too many devices", `{"devices": [` + strings.Repeat(`{"memory_bytes": 1}, `, cluster.MaxStages) + `{"memory_bytes": 1}]}`, "devices: must hold at most 4096 entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load.Cluster([]byte(tc.src))
			if c != nil {
				t.Errorf("accepted %+v", c)
			}
			wantError(t, err, tc.want)
		})
	}
	c, err := load.Cluster([]byte(`{"devices": [{"memory_bytes": 8e10, "flops_per_second": 312e12}]}`))
	if err != nil || c.Devices[0].MemoryBytes != 80_000_000_000 {
		t.Errorf("memory_bytes 8e10: %v, %v", c, err)
	}
}

func TestGraphcoreHostile(t *testing.T) {
	info := func(s string) string { return `{"layerName": ["a"], "layerInfo": [` + s + `]}` }
	for _, tc := range []struct{ name, src, want string }{
		{"null cycles", info(`{"cycle": {"forward": null}}`), "layerInfo[0].cycle.forward: must be a number, got null"},
		{"null memory", info(`{"memory": null}`), "layerInfo[0].memory: must be a JSON object, got null"},
		{"null shared", info(`{"memory": {"shared": {"code": null}}}`), `layerInfo[0].memory.shared["code"]: must be a number, got null`},
		{"null names", `{"layerName": null, "layerInfo": [{}]}`, "layerName: must be a JSON array, got null"},
		{"duplicate key", info(`{"cycle": {"forward": 1, "forward": 2}}`), "layerInfo[0].cycle.forward: is given twice"},
		{"duplicate top key", `{"layerName": ["a"], "layerName": ["b"], "layerInfo": [{}]}`, "layerName: is given twice"},
		{"duplicate exclusive key", info(`{"memory": {"exclusive": {"code": 1, "code": 1}}}`), `layerInfo[0].memory.exclusive["code"]: is given twice`},
		{"NaN string", info(`{"cycle": {"forward": "NaN"}}`), `layerInfo[0].cycle.forward: must be a number, got a string "NaN"`},
		{"Infinity string", info(`{"memory": {"maxTemporary": "Infinity"}}`), `layerInfo[0].memory.maxTemporary: must be a number, got a string "Infinity"`},
		{"fraction in an exponent", info(`{"memory": {"inputs": 15e-1}}`), "layerInfo[0].memory.inputs: must be a whole number, got 15e-1"},
		{"too many layers", `{"layerName": [` + strings.Repeat(`"a", `, model.MaxLayers) + `"a"], "layerInfo": []}`, fmt.Sprintf("layerName: must hold at most %d entries", model.MaxLayers)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := load.Model([]byte(tc.src))
			if m != nil {
				t.Errorf("accepted %+v", m.Layers)
			}
			wantError(t, err, tc.want)
		})
	}
	// 2^60 - 1 written as a float is read exactly, not rounded to 2^60 through float64.
	m, _, err := load.Model([]byte(info(`{"cycle": {"forward": 1e3}, "memory": {"inputs": 1e11, "outputs": 1152921504606846975.0}}`)))
	if err != nil || m.Layers[0].ForwardCycles != 1000 || *m.Layers[0].RecvBytes != 1e11 || *m.Layers[0].SendBytes != 1<<60-1 {
		t.Errorf("whole numbers as floats: %+v, %v", m, err)
	}
}

func TestGraphcoreClusterHostile(t *testing.T) {
	conn := `{"recvGBps": 1, "sendGBps": 1}`
	for _, tc := range []struct{ name, src, want string }{
		{"null clock", `{"clock": null, "memory": 894, "connection": [` + conn + `]}`, "clock: must be a number, got null"},
		{"duplicate clock", `{"clock": 1e9, "clock": 2e9, "memory": 894, "connection": [` + conn + `]}`, "clock: is given twice"},
		{"NaN string", `{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": "NaN", "sendGBps": 1}]}`, `connection[0].recvGBps: must be a number, got a string "NaN"`},
		{"null idle", `{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": 1, "sendGBps": 1, "recvIdleCycle": null}]}`, "connection[0].recvIdleCycle: must be a number, got null"},
		{"fractional idle", `{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": 1, "sendGBps": 1, "sendIdleCycle": 2.5}]}`, "connection[0].sendIdleCycle: must be a whole number, got 2.5"},
		{"too many IPUs", `{"clock": 1e9, "memory": 894, "connection": [` + strings.Repeat(conn+",", cluster.MaxStages) + conn + `]}`, "connection: must hold at most 4096 entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load.Cluster([]byte(tc.src))
			if c != nil {
				t.Errorf("accepted %+v", c)
			}
			wantError(t, err, tc.want)
		})
	}
	c, err := load.Cluster([]byte(`{"clock": 1e9, "memory": 894, "connection": [{"recvGBps": 1, "sendGBps": 1, "recvIdleCycle": 5e4}]}`))
	if err != nil || c.Devices[0].Recv.IdleCycles != 50000 {
		t.Errorf("recvIdleCycle 5e4: %v, %v", c, err)
	}
}

// TestInputSizeBound: a file over load.MaxInputBytes is refused before it is read.
func TestInputSizeBound(t *testing.T) {
	big := make([]byte, load.MaxInputBytes+1) // pages never written cost no memory
	copy(big, `{"layers": [{"name": "a"}]}`)
	want := "the input is 536870913 bytes; at most 536870912 (512 MiB) are read"
	if _, _, err := load.Model(big); err == nil || err.Error() != want {
		t.Errorf("load.Model: %v", err)
	}
	if _, err := load.Cluster(big); err == nil || err.Error() != want {
		t.Errorf("load.Cluster: %v", err)
	}
}

// allocated returns the bytes f allocates, and how long it takes.
func allocated(f func()) (uint64, time.Duration) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, d
}

// TestHostileArraysCostLittle: an array of a million numbers where layers belong used to
// be decoded whole into a million layers (50 MB of it took 11.8 GB); it is refused at
// its first elements. A model of many valid layers is decoded layer by layer: what it
// allocates stays a small multiple of the file.
func TestHostileArraysCostLittle(t *testing.T) {
	zeros := []byte(`{"layers": [0` + strings.Repeat(", 0", 1<<20) + `]}`)
	var err error
	n, d := allocated(func() { _, _, err = load.Model(zeros) })
	wantError(t, err, "layers[0]: must be a JSON object, got a number")
	if es, _ := model.AsFieldErrors(err); len(es) != 10 {
		t.Errorf("%d errors, want reading to stop at 10", len(es))
	}
	if n > 1<<20 {
		t.Errorf("refusing %d bytes allocated %d bytes (%v)", len(zeros), n, d)
	}

	// Layers are counted ahead, without checking syntax: a syntax error in the first must
	// not have allocated the slice for every empty object after it.
	empty := []byte(`{"layers": [{"a" 1}` + strings.Repeat(", {}", 200000) + `]}`)
	n, d = allocated(func() { _, _, err = load.Model(empty) })
	if err == nil || !strings.Contains(err.Error(), "invalid character '1' after object key") {
		t.Errorf("error %v, want the syntax error", err)
	}
	if ratio := float64(n) / float64(len(empty)); ratio > 12 {
		t.Errorf("refusing %d bytes with a syntax error allocated %.1f times as much (%v)", len(empty), ratio, d)
	}

	var b strings.Builder
	b.WriteString(`{"layers": [`)
	for i := range 20000 {
		fmt.Fprintf(&b, `{"name": "l%d", "forward_seconds": 1e-3, "param_bytes": 1048576, "outputs": [{"id": "t%d", "bytes": 4096}]},`, i, i)
	}
	b.WriteString(`{"name": "last"}]}`)
	var m *model.Model
	n, d = allocated(func() { m, _, err = load.Model([]byte(b.String())) })
	if err != nil || len(m.Layers) != 20001 {
		t.Fatalf("20001 layers: %v", err)
	}
	if ratio := float64(n) / float64(b.Len()); ratio > 12 {
		t.Errorf("decoding %d bytes allocated %.1f times as much (%v)", b.Len(), ratio, d)
	}
}
