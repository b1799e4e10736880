package request

import (
	"fmt"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/wire"
)

// A cluster document whose stages are joined by links of different speeds, and in
// different styles (bytes per second, or Graphcore's GiB/s with idle cycles): without
// cluster.data_link, the data-parallel all-reduce crosses the slowest of them, by bytes
// per second, wherever it sits (the first pair, a middle one, the last, a device's own
// send link). Each case is built so that another choice gives another time: the first
// or the last link, the fastest, or the smallest number as written (6 GiB/s against
// 5e9 bytes/s).
func TestDataParallelSlowestLink(t *testing.T) {
	const clock = 1e9 // Hz, for the links given in cycles
	bps := func(lat, bw float64) string {
		return fmt.Sprintf(`{"latency_seconds": %g, "bytes_per_second": %g}`, lat, bw)
	}
	gib := func(idle int, gbps float64) string {
		return fmt.Sprintf(`{"idle_cycles": %d, "gbps": %g}`, idle, gbps)
	}
	type want struct{ lat, bw float64 }
	cases := []struct {
		name  string
		links [3]string
		send1 string // device 1's own send link, when set
		want  want
	}{
		{"middle", [3]string{bps(1e-6, 100e9), bps(4e-6, 20e9), bps(2e-6, 50e9)}, "", want{4e-6, 20e9}},
		{"first", [3]string{bps(4e-6, 10e9), bps(2e-6, 50e9), bps(1e-6, 100e9)}, "", want{4e-6, 10e9}},
		{"last", [3]string{bps(1e-6, 100e9), bps(2e-6, 50e9), bps(4e-6, 10e9)}, "", want{4e-6, 10e9}},
		{"bytes below GiB/s", [3]string{gib(3000, 6), bps(5e-6, 5e9), bps(1e-6, 100e9)}, "", want{5e-6, 5e9}},
		{"GiB/s below bytes", [3]string{bps(1e-6, 5e9), gib(3000, 4), bps(1e-6, 100e9)}, "", want{3000 / clock, 4 * (1 << 30)}},
		{"device send link", [3]string{bps(1e-6, 100e9), bps(1e-6, 100e9), bps(1e-6, 100e9)}, bps(7e-6, 3e9), want{7e-6, 3e9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			send := ""
			if tc.send1 != "" {
				send = `, "send": ` + tc.send1
			}
			dev := `{"name": "a100-80gb", "clock_hz": 1e9%s}`
			cl := fmt.Sprintf(`{"devices": [%s, %s, %s, %s], "links": [%s, %s, %s]}`,
				fmt.Sprintf(dev, ""), fmt.Sprintf(dev, send), fmt.Sprintf(dev, ""), fmt.Sprintf(dev, ""),
				tc.links[0], tc.links[1], tc.links[2])
			res := runJSON(t, `{"model": {"example": "gpt2-medium"}, "cluster": {"document": `+cl+`}, "parallelism": {"data": 2}}`)
			if diagnostic(res, wire.CodeDataLinkAssumed) == nil {
				t.Errorf("no data_link_assumed note")
			}
			for i, d := range res.Devices {
				if d.GradBytes == 0 {
					t.Fatalf("device %d all-reduces no gradients", i)
				}
				if w := ring(2, d.GradBytes, tc.want.lat, tc.want.bw); !near(d.AllReduceSeconds, w) {
					t.Errorf("device %d: all-reduce %v s, want %v s over the slowest link (%g B/s, %g s)", i, d.AllReduceSeconds, w, tc.want.bw, tc.want.lat)
				}
			}
		})
	}
}

// A tied embedding's gradients, copied to the first and the last stage, are all-reduced
// between them over the slowest link between the stages of a cluster document, wherever
// it sits.
func TestTiedAllReduceSlowestLink(t *testing.T) {
	a, err := arch.Bundled("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	bytes := int64(a.VocabSize) * int64(a.HiddenSize) * 2 // bf16 gradients
	fast, slow := `{"latency_seconds": 1e-6, "bytes_per_second": 100e9}`, `{"latency_seconds": 4e-6, "bytes_per_second": 5e9}`
	for i, links := range [][3]string{{slow, fast, fast}, {fast, slow, fast}, {fast, fast, slow}} {
		cl := fmt.Sprintf(`{"devices": [{"name": "a100-80gb"}, {"name": "a100-80gb"}, {"name": "a100-80gb"}, {"name": "a100-80gb"}], "links": [%s, %s, %s]}`, links[0], links[1], links[2])
		res := runJSON(t, `{"model": {"architecture": {"name": "gpt2", "tie": "copy"}}, "cluster": {"document": `+cl+`}}`)
		if want := ring(2, bytes, 4e-6, 5e9); !near(res.Step.TiedAllReduceSeconds, want) {
			t.Errorf("slow link %d: tied all-reduce %v s, want %v s over the slowest link", i, res.Step.TiedAllReduceSeconds, want)
		}
	}
}
