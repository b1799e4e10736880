package analytic

import (
	"math"
	"testing"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
)

// TestHostScale: a device whose usual host is slower per operator (cluster.Perf.
// HostSecondsScale: a Grace CPU's 2.75 times an H100 machine's x86 host, TE #2053's
// torch.nn.Linear rows) multiplies every host figure of the framework by it, and
// nothing on the device: the closed form HostOps x HostKernelSeconds x s +
// HostLayerSeconds x s per pass, the optimizer's host time per tensor x s, and each
// pass the longer of its device and host time. The same target at scale 1 (and a
// target whose scale is left 0) is the reference.
func TestHostScale(t *testing.T) {
	a, _ := arch.Bundled("gpt2")
	o := Options{Batch: 1, Seq: 128}
	ref := frameworkTarget(t, "h100-sxm", cluster.Eager)
	if ref.Perf.HostScale() != 1 {
		t.Fatalf("h100-sxm host scale %v, want the reference's 1", ref.Perf.HostScale())
	}
	base, err := Estimate(a, ref, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []float64{1, 2.75, 0.5} {
		tg := ref
		tg.Perf.HostSecondsScale = s
		got, err := Estimate(a, tg, o)
		if err != nil {
			t.Fatal(err)
		}
		fw := ref.Framework
		for i, l := range got.Layers {
			b := base.Layers[i]
			if l.FwdDeviceSeconds != b.FwdDeviceSeconds || l.BwdDeviceSeconds != b.BwdDeviceSeconds {
				t.Errorf("scale %v, %s: device time %v, %v s, want the reference's %v, %v", s, l.Name, l.FwdDeviceSeconds, l.BwdDeviceSeconds, b.FwdDeviceSeconds, b.BwdDeviceSeconds)
			}
			wantF := s * (l.FwdTerms.HostOps*fw.HostKernelSeconds + fw.HostLayerSeconds)
			wantB := s * (l.BwdTerms.HostOps*fw.HostKernelSeconds + fw.HostLayerSeconds)
			if math.Abs(l.FwdHostSeconds-wantF) > 1e-12 || math.Abs(l.BwdHostSeconds-wantB) > 1e-12 {
				t.Errorf("scale %v, %s: host %v, %v s, want %v, %v", s, l.Name, l.FwdHostSeconds, l.BwdHostSeconds, wantF, wantB)
			}
			if l.FwdSeconds != max(l.FwdDeviceSeconds, l.FwdHostSeconds) || l.BwdSeconds != max(l.BwdDeviceSeconds, l.BwdHostSeconds) {
				t.Errorf("scale %v, %s: passes %v, %v s, want the longer of device and host", s, l.Name, l.FwdSeconds, l.BwdSeconds)
			}
		}
		if want := s * float64(got.Total.ParamTensors) * fw.OptimizerTensorSeconds; math.Abs(got.Total.OptimizerHostSeconds-want) > 1e-12 {
			t.Errorf("scale %v: optimizer host %v s, want %v", s, got.Total.OptimizerHostSeconds, want)
		}
	}
}

// TestGraceHostScale: the Grace-hosted presets carry TE #2053's measured ratio, 37.08
// over 13.48 us for one torch.nn.Linear forward (GB200 against a DGX H100's Xeon
// 8480C), and the x86-hosted ones none; a small eager model, host-bound on both, runs
// that much slower per pass on a GB200 than on a B200 (the same Blackwell GPU).
func TestGraceHostScale(t *testing.T) {
	for _, tc := range []struct {
		device string
		want   float64
	}{{"gb200", 37.08 / 13.48}, {"gb300", 37.08 / 13.48}, {"b200", 1}, {"b300", 1}, {"h100-sxm", 1}, {"a100-80gb", 1}} {
		d, err := cluster.LookupDevice(tc.device)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Perf.HostScale(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: host scale %v, want %v", tc.device, got, tc.want)
		}
	}
	a, _ := arch.Bundled("gpt2")
	o := Options{Batch: 1, Seq: 128}
	b, err := Estimate(a, frameworkTarget(t, "b200", cluster.Eager), o)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Estimate(a, frameworkTarget(t, "gb200", cluster.Eager), o)
	if err != nil {
		t.Fatal(err)
	}
	lb, lg := b.Layers[1], g.Layers[1]
	if lb.FwdSeconds != lb.FwdHostSeconds {
		t.Fatalf("gpt2 block on a b200 in eager mode: device %v s, host %v s: not host-bound", lb.FwdDeviceSeconds, lb.FwdHostSeconds)
	}
	if r := lg.FwdSeconds / lb.FwdSeconds; math.Abs(r-37.08/13.48) > 1e-9 {
		t.Errorf("gb200 block forward %.4g times the b200's, want %.4g", r, 37.08/13.48)
	}
}
