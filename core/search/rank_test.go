package search

import "testing"

// TestNearTieAndRows: the best is the most headroom within NearTie of the fastest, and
// rows collapse outcomes that differ only in ZeRO, recomputation or memory proportion
// at the same speed into the one with the most headroom.
func TestNearTieAndRows(t *testing.T) {
	const gib = 1 << 30
	out := func(p, d, zero int, sps float64, headroom int64) Outcome {
		return Outcome{Candidate: Candidate{Config: Config{Pipeline: p, Data: d, Tensor: 1, Schedule: "1f1b", Recompute: "none", ZeRO: zero, MemoryProportion: 1, Microbatches: 8}, MicrobatchSize: 1},
			Devices: p * d, Feasible: true, SamplesPerSecond: sps, HeadroomBytes: headroom}
	}
	for _, tc := range []struct {
		name     string
		os       []Outcome
		best     Candidate
		rows     int
		alikeOf0 int
	}{
		{"a 0.1% gain does not beat 25 GiB of headroom",
			[]Outcome{out(1, 8, 0, 100.0, 1*gib), out(2, 4, 0, 99.9, 26*gib)}, out(2, 4, 0, 0, 0).Candidate, 2, 0},
		{"a 2% gain does",
			[]Outcome{out(1, 8, 0, 100.0, 1*gib), out(2, 4, 0, 98.0, 26*gib)}, out(1, 8, 0, 0, 0).Candidate, 2, 0},
		{"ZeRO 0 and 1 at the same speed are one row, ZeRO 1's",
			[]Outcome{out(2, 4, 0, 50, 10*gib), out(2, 4, 1, 50, 20*gib), out(1, 8, 0, 40, 30*gib)}, out(2, 4, 1, 0, 0).Candidate, 2, 1},
		{"infeasible outcomes are no rows",
			[]Outcome{out(2, 4, 0, 50, 10*gib), {Candidate: out(4, 2, 0, 0, 0).Candidate, Devices: 8}}, out(2, 4, 0, 0, 0).Candidate, 1, 0},
	} {
		b := pickBest(tc.os)
		if b == nil || b.Candidate != tc.best {
			t.Errorf("%s: best %v, want %s", tc.name, b, tc.best)
			continue
		}
		rs := rows(tc.os, b)
		if len(rs) != tc.rows || rs[0].Candidate != tc.best || len(rs[0].Alike) != tc.alikeOf0 {
			t.Errorf("%s: %d rows, first %s with %d alike; want %d, %s, %d", tc.name, len(rs), rs[0].Candidate, len(rs[0].Alike), tc.rows, tc.best, tc.alikeOf0)
		}
	}
	if pickBest([]Outcome{{Devices: 1}}) != nil {
		t.Error("a best among infeasible outcomes")
	}
}
