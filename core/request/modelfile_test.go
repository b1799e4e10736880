package request

import (
	"context"
	"os"
	"testing"

	"pipeplan/core/wire"
)

// TestModelFileIsWhatCoreReads: spec.ModelFromFile, which the page and the command line put
// a person's model file into a request with, gives each kind of file the model field
// core reads it from, so that the request plans the model the file describes.
func TestModelFileIsWhatCoreReads(t *testing.T) {
	for _, tc := range []struct {
		file, device, source, format string
	}{
		{"../examples/gpt2-medium.json", "a100-80gb", "document", "native"},
		{"../load/testdata/graphcore/even_split_2.json", "gc200", "document", "graphcore"},
		{"../../../shared/data/pipedream/vgg16.graph.txt", "a100-80gb", "document", "pipedream"},
		{"../../../shared/data/hf-configs/gpt2.json", "a100-80gb", "architecture", ""},
		{"../../../shared/data/hf-configs/llama-2-7b.json", "a100-80gb", "architecture", ""},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, variant := range []struct{ name, prefix, suffix string }{
			{"as it is", "", ""},
			{"with a byte-order mark and white space", "\xef\xbb\xbf \n", "\n\n"},
		} {
			m, err := wire.ModelFromFile([]byte(variant.prefix+string(data)+variant.suffix), 1<<30)
			if err != nil {
				t.Errorf("%s %s: %v", tc.file, variant.name, err)
				continue
			}
			r := &wire.Request{Model: m,
				Cluster: wire.ClusterSpec{Device: tc.device, Count: 2}}
			res, err := Run(context.Background(), r)
			if err != nil {
				t.Errorf("%s %s: %v", tc.file, variant.name, err)
				continue
			}
			if res.Model.Source != tc.source || res.Model.Format != tc.format {
				t.Errorf("%s %s: planned as %s %q, want %s %q", tc.file, variant.name, res.Model.Source, res.Model.Format, tc.source, tc.format)
			}
		}
	}
}
