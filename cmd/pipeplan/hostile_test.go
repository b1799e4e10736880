package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc): a bound on a
// refusal's work that does not depend on the machine's speed.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileInputs: input an attacker or a confused user gives the command line is
// refused with exit 2 and a message naming the flag or field, within a bound on the
// memory it allocates that each case states. The figures before the fixes (issue 21,
// /usr/bin/time -v of the whole process): --max-devices 1e8 took 2.8 GB to refuse, 1e9
// exhausted the machine; 64 MB of zeros as a model 29 s and 2.7 GB; --request /dev/zero
// 4.2 GB; a request of 199 bytes asking for events 20 s and 3.6 GB (a 0.9 GB answer).
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if size > 0 {
			if err := os.Truncate(p, size); err != nil { // sparse: zeros that take no disk
				t.Fatal(err)
			}
		}
		return p
	}
	zeros := file("zeros.bin", nil, 64<<20)
	bigConfig := file("big_config.json", []byte(`{"model_type": "gpt2", "pad": "`), 64<<20)
	gpt2 := []byte(`{"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}`)
	bom := file("bom.json", append([]byte("\xef\xbb\xbf"), gpt2...), 0)
	empty := filepath.Join(dir, "empty-folder")
	folder := filepath.Join(dir, "hf-model")
	for _, d := range []string{empty, folder} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(folder, "config.json"), gpt2, 0o644); err != nil {
		t.Fatal(err)
	}
	dup := file("dup.json", []byte(`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4, "count": 8}}`), 0)
	events := file("events.json", []byte(`{"version":1,"model":{"architecture":{"name":"llama-2-7b"}},"cluster":{"device":"h100-sxm","count":32},"training":{"recompute":"full"},"schedule":{"name":"zb-h1","microbatches":32768},"events":true}`), 0)
	longName := file("long.json", []byte(`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "`+strings.Repeat("d", 100000)+`", "count": 4}}`), 0)
	var prof bytes.Buffer
	if code := run([]string{"example", "gpt2-medium"}, &prof, &bytes.Buffer{}); code != 0 {
		t.Fatal("pipeplan example failed")
	}
	var m map[string]any
	json.Unmarshal(prof.Bytes(), &m)
	m["measured_on"] = "cpu"
	cpuProfile, _ := json.Marshal(m)
	cpu := file("cpu.json", cpuProfile, 0)

	const mib = 1 << 20
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		want  string
		bound uint64 // bytes allocated at most
	}{
		{"--max-devices 1e8", []string{"search", "--hf-config", "meta-llama-3-8b", "--device", "h100-sxm", "--max-devices", "100000000"},
			exitBad, "--max-devices: must be between 1 and 65536, got 100000000", 4 * mib},
		{"--max-devices 1e9", []string{"search", "--hf-config", "meta-llama-3-8b", "--device", "h100-sxm", "--max-devices", "1000000000"},
			exitBad, "--max-devices: must be between 1 and 65536, got 1000000000", 4 * mib},
		{"--max-devices 1e8 as a float", []string{"search", "--hf-config", "meta-llama-3-8b", "--device", "h100-sxm", "--max-devices", "1e8"},
			exitBad, `invalid value "1e8" for flag -max-devices`, 4 * mib},
		{"a grid too large to walk", []string{"search", "--hf-config", "meta-llama-3-8b", "--device", "h100-sxm", "--max-devices", "65536", "--microbatches", "8"},
			exitBad, "--max-devices: the grid holds 13048320 configurations, more than the 1048576 a search may walk", 64 * mib},
		{"--max-batch 1e9", []string{"search", "--hf-config", "meta-llama-3-8b", "--device", "h100-sxm", "--max-devices", "8", "--max-batch", "1000000000"},
			exitBad, "--max-batch: must be between 0 and 4096, got 1000000000", 4 * mib},
		{"64 MB of zeros as a model", []string{"plan", "--model", zeros, "--device", "a100-80gb", "--stages", "4"},
			exitBad, "zeros.bin: the input is binary (a NUL byte at offset 0), not text", mib},
		{"--request /dev/zero", []string{"plan", "--request", "/dev/zero"},
			exitBad, "/dev/zero: the input is binary (a NUL byte at offset 0)", mib},
		{"an HF config of 64 MB", []string{"plan", "--hf-config", bigConfig, "--device", "a100-80gb", "--stages", "2"},
			exitBad, "big_config.json: the input is 67108864 bytes; at most 1048576 (1 MiB) are read", mib},
		{"--hf-config of a folder without config.json", []string{"plan", "--hf-config", empty, "--device", "a100-80gb", "--stages", "2"},
			exitBad, "empty-folder is a folder without a config.json", mib},
		{"a key given twice", []string{"plan", "--request", dup},
			exitBad, "cluster.count: is given twice", 4 * mib},
		{"199 bytes asking for 2 million events", []string{"plan", "--request", events, "--json"},
			exitBad, "events: the timeline of 32768 microbatches on 32 pipeline stages holds at least 2097152 events, more than the 1048576", 64 * mib},
		{"a device name of 100,000 characters", []string{"plan", "--request", longName},
			exitBad, "... (cut: ", 16 * mib},
		{"an --hf-config name of 100,000 characters", []string{"plan", "--hf-config", strings.Repeat("x", 100000), "--device", "a100-80gb"},
			exitBad, "... (cut: ", 16 * mib},
		{"a command of 100,000 characters", []string{strings.Repeat("x", 100000)}, exitBad, "... (cut: ", 16 * mib},
		{"calibrate on a CPU profile", []string{"calibrate", "--model", cpu, "--hf-config", "gpt2-medium"},
			exitBad, `measured_on.name: the profile was measured on "cpu", which is no device preset`, 64 * mib},
		{"an HF config with a BOM", []string{"plan", "--hf-config", bom, "--device", "a100-80gb", "--stages", "2"}, exitOK, "", 0},
		{"--hf-config of a model's folder", []string{"plan", "--hf-config", folder, "--device", "a100-80gb", "--stages", "2"}, exitOK, "hf-model: 15 layers on 2 stages", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var stdout, stderr bytes.Buffer
			got := allocated(func() { code = run(tc.args, &stdout, &stderr) })
			out := stderr.String()
			if tc.code == exitOK {
				out = stdout.String()
			}
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, %.600s; want exit %d with %q", code, out, tc.code, tc.want)
			}
			if tc.code != exitOK && stderr.Len() > 12<<10 { // a flag error prints the usage (search's: 8.3 KB)
				t.Errorf("a message of %d bytes: it echoes the input", stderr.Len())
			}
			if tc.bound > 0 && got > tc.bound {
				t.Errorf("allocated %d bytes, more than the %d bound", got, tc.bound)
			}
		})
	}
}
