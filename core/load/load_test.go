package load_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"pipeplan/core/load"
)

func TestDetectModel(t *testing.T) {
	cases := []struct {
		src  string
		want load.Format
	}{
		{`{"layers": [{"name": "a"}]}`, load.Native},
		{"\ufeff  \n{\"layers\": []}", load.Native},
		{`{"layerName": ["a"], "layerInfo": [{}]}`, load.Graphcore},
		{`{"layerInfo": []}`, load.Graphcore},
		{`{"layers": [], "layerType": []}`, load.Graphcore},
		{`[1, 2]`, load.Native},
		{`{"layers": [`, load.Native}, // broken JSON: the native decoder says where
		{"node1 -- Input -- forward_compute_time=1", load.PipeDream},
		{"\tnode1 -- node2\n", load.PipeDream},
		{"hello", ""},
		{"", ""},
	}
	for _, tc := range cases {
		if got := load.DetectModel([]byte(tc.src)); got != tc.want {
			t.Errorf("DetectModel(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestDetectCluster(t *testing.T) {
	cases := []struct {
		src  string
		want load.Format
	}{
		{`{"devices": [{"memory_bytes": 1}]}`, load.Native},
		{`{"clock": 1, "memory": 1, "connection": []}`, load.Graphcore},
		{`{"connection": []}`, load.Graphcore},
		{"\ufeff{\"memory\": 1}", load.Graphcore},
		{`{"devices": `, load.Native},
	}
	for _, tc := range cases {
		if got := load.DetectCluster([]byte(tc.src)); got != tc.want {
			t.Errorf("DetectCluster(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestNativeStillStrict(t *testing.T) {
	m, f, err := load.Model([]byte("\ufeff" + `{"layers": [{"name": "a", "forward_seconds": 2}]}`))
	if err != nil || f != load.Native || m.Layers[0].ForwardSeconds != 2 {
		t.Fatalf("native model: %+v, %q, %v", m, f, err)
	}
	for _, tc := range []struct{ src, want string }{
		{`{"layers": [{"name": "a", "forward_secs": 2}]}`, `unknown field "forward_secs"`},
		{`{"layers": [{"name": "a", "forward_seconds": -2}]}`, "layers[0].forward_seconds: must be >= 0"},
		{`{"layers": []} {}`, "unexpected data after the JSON value"},
	} {
		if _, _, err := load.Model([]byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
	if _, err := load.Cluster([]byte(`{"devices": [{"memory_bytes": 0}]}`)); err == nil || !strings.Contains(err.Error(), "devices[0].memory_bytes: must be > 0") {
		t.Errorf("native cluster error %v", err)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\n\"layers\": [,]}", "line 2, column 12"},
		{"{]", "line 1, column 2"},
		{"{\"layers\": []}\n\n  x", "line 3, column 3"},
	} {
		_, _, err := load.Model([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Model(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestFormatsDocExample keeps the native model example in docs/formats.md loadable.
func TestFormatsDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/formats.md has no json example")
	}
	m, f, err := load.Model([]byte(example))
	if err != nil || f != load.Native || len(m.Layers) != 2 || m.Layers[0].TieGroup != "embedding" {
		t.Fatalf("the documented example loads as %v, %v, %v", m, f, err)
	}
}

// Devices named after presets need no figures; a device without a speed beside them is an
// error, since layer times could not be scaled to it.
func TestClusterPresetNames(t *testing.T) {
	c, err := load.Cluster([]byte(`{"devices": [{"name": "h100-sxm"}, {"name": "a100-80gb", "memory_bytes": 1000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []float64{c.Devices[0].FLOPSPerSecond, c.Devices[1].FLOPSPerSecond, float64(c.Devices[0].MemoryBytes), float64(c.Devices[1].MemoryBytes)}; fmt.Sprint(got) != fmt.Sprint([]float64{989e12, 312e12, 80 << 30, 1000}) {
		t.Errorf("flops and memory %v", got)
	}
	_, err = load.Cluster([]byte(`{"devices": [{"name": "h100-sxm"}, {"name": "mine", "memory_bytes": 1000}]}`))
	if want := "devices[1].flops_per_second: is missing, but devices[0] states one"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("load.Cluster = %v, want %q", err, want)
	}
}
