package load_test

import (
	"fmt"
	"strings"
	"testing"

	"pipeplan/core/load"
)

// BenchmarkNativeModel decodes and validates a native model of 10,000 layers (1.8 MB).
func BenchmarkNativeModel(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"layers": [`)
	for i := range 10000 {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, `{"name": "block.%d", "forward_seconds": 0.0021, "backward_seconds": 0.0042, "param_bytes": 25190400, "activation_bytes": 201326592, "outputs": [{"id": "h%d", "bytes": 16777216}]}`, i, i)
	}
	sb.WriteString("]}")
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := load.Model(data); err != nil {
			b.Fatal(err)
		}
	}
}
