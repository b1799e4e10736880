package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSearchHSDP: `pipeplan search --sharding hsdp` searches HSDP beside ZeRO-3 (with
// --shard-group, that group); on nodes of 4 H100s joined by InfiniBand EDR, sequences of
// 1,024, it picks HSDP over a node's replicas and says so (with 2-way tensor
// parallelism, a node's 2 replicas: the all-reduce across the groups hides only in what
// of the backward the shard group's per-layer collectives leave, so halving every
// device's bytes pays); --prefetch is refused. (With HDR and sequences of 4,096
// ZeRO-3's rings over a node's 4 NICs hide behind the compute:
// cluster.Topology.RingInter.) --reshard fixes the candidates' resharding.
func TestSearchHSDP(t *testing.T) {
	args := []string{"search", "--hf-config", "llama-3.2-1b", "--seq", "1024", "--device", "h100-sxm", "--devices-per-node", "4",
		"--link-inter", "ib-edr", "--max-devices", "16", "--global-batch", "32", "--max-batch", "4", "--schedule", "1f1b", "--sharding", "hsdp"}
	for _, c := range []struct {
		extra []string
		want  string
		code  int
	}{
		{nil, "2-way tensor parallel (16 devices), 1f1b, 1 microbatch of 4, recompute full, ZeRO-3\n      HSDP: ZeRO-3 within shard groups of 2 replicas", 0},
		{[]string{"--shard-group", "2"}, "shard groups of 2 replicas", 0},
		{[]string{"--prefetch", "none"}, "--prefetch: does not go with search", 2},
		// --reshard fixes the zero3 and hsdp candidates' resharding (core's rule by default).
		{[]string{"--reshard", "layer"}, "HSDP: ZeRO-3 within shard groups", 0},
		{[]string{"--reshard", "never"}, "--reshard: must be one of layer, step", 2},
	} {
		var out, errs bytes.Buffer
		code := run(append(append([]string(nil), args...), c.extra...), &out, &errs)
		if code != c.code || !strings.Contains(out.String()+errs.String(), c.want) {
			t.Errorf("%v: exit %d, want %d, saying %q:\n%s%s", c.extra, code, c.code, c.want, out.String(), errs.String())
		}
	}
}

// TestSearchFSDP2: `pipeplan search --fully-shard --reduce-dtype fp32` plans its zero3
// and hsdp candidates as PyTorch FSDP2 runs them (core's rule: the base request's FSDP2
// fields reach the candidates that shard weights): the best request states them; a
// reduce dtype core refuses is refused naming the flag.
func TestSearchFSDP2(t *testing.T) {
	args := []string{"search", "--hf-config", "llama-3.2-1b", "--seq", "1024", "--device", "h100-sxm", "--devices-per-node", "8",
		"--max-devices", "8", "--stages", "1", "--dp", "8", "--sharding", "zero3", "--microbatches", "4", "--batch", "1", "--fully-shard"}
	for _, c := range []struct {
		extra []string
		want  string
		code  int
	}{
		{[]string{"--reduce-dtype", "fp32", "--json"}, `"reduce_dtype":"fp32","fully_shard":true`, 0},
		{[]string{"--reduce-dtype", "bf16"}, "--reduce-dtype: must be fp32", 2},
	} {
		var out, errs bytes.Buffer
		code := run(append(append([]string(nil), args...), c.extra...), &out, &errs)
		got := strings.ReplaceAll(strings.ReplaceAll(out.String()+errs.String(), " ", ""), "\n", "")
		if code != c.code || !strings.Contains(got, strings.ReplaceAll(c.want, " ", "")) {
			t.Errorf("%v: exit %d, want %d, saying %q:\n%s%s", c.extra, code, c.code, c.want, out.String(), errs.String())
		}
	}
}

// TestSearchFP8FSDPAllGather: `pipeplan search --fp8-fsdp-all-gather` with fp8 and FSDP2
// plans its zero3 candidates with torchao's float8 all-gather (the best request states
// training.fp8_fsdp_all_gather); without fp8 it is refused naming the flag.
func TestSearchFP8FSDPAllGather(t *testing.T) {
	args := []string{"search", "--hf-config", "llama-3.2-1b", "--seq", "1024", "--device", "h100-sxm", "--devices-per-node", "8",
		"--max-devices", "8", "--stages", "1", "--dp", "8", "--sharding", "zero3", "--microbatches", "4", "--batch", "1", "--fully-shard",
		"--framework", "compiled", "--fp8-fsdp-all-gather"}
	for _, c := range []struct {
		extra []string
		want  string
		code  int
	}{
		{[]string{"--dtype", "fp8", "--json"}, `"fp8_fsdp_all_gather":true`, 0},
		{[]string{"--dtype", "bf16"}, "--fp8-fsdp-all-gather: applies to dtype fp8", 2},
	} {
		var out, errs bytes.Buffer
		code := run(append(append([]string(nil), args...), c.extra...), &out, &errs)
		got := strings.ReplaceAll(strings.ReplaceAll(out.String()+errs.String(), " ", ""), "\n", "")
		if code != c.code || !strings.Contains(got, strings.ReplaceAll(c.want, " ", "")) {
			t.Errorf("%v: exit %d, want %d, saying %q:\n%s%s", c.extra, code, c.code, c.want, out.String(), errs.String())
		}
	}
}
