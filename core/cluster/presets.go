package cluster

import (
	"fmt"
	"sort"
	"strings"

	"pipeplan/core/model"
)

// DevicePreset is a known accelerator: the Device a cluster holds, the performance figures
// the analytic profiler needs (Perf), and the link two such devices usually share.
type DevicePreset struct {
	Device
	// Perf holds the figures beyond Device that an analytic estimate needs.
	Perf Perf
	// Link is the preset name of the usual link between two such devices in a pipeline
	// (inside a node).
	Link string
	// Network is the preset name of the usual link between nodes of such devices, one
	// network interface per device ("" when there is no usual one).
	Network string
	// ScaleUpDevices is the size of the device's scale-up domain: how many devices share
	// its fast fabric (Link) before traffic must cross the scale-out network (Network):
	// 8 in an HGX or DGX board, 72 in a GB200 or GB300 NVL72 rack (one NVLink domain), 256
	// in a TPU v6e pod's 2-D torus. A cluster of nodes (cluster.Topology) keeps a
	// tensor-parallel group inside one node, so devices_per_node up to this size is what
	// the hardware allows. 0 when unknown.
	ScaleUpDevices int
	// NICPCIeBytesPerSecond is the PCIe link between the device and its NIC as NCCL
	// prices it (NCCLPCIeBytesPerSecond), where the board's link is known: NCCL's ring
	// search takes the narrower of it and the NIC for each channel across nodes
	// (Topology.NICPCIeBytesPerSecond, Topology.RingInter). 0 when unknown or not NCCL's.
	NICPCIeBytesPerSecond float64
	// Note says where the figures come from.
	Note string
	// GPU: the device runs a GPU framework (PyTorch eager, compiled or with CUDA
	// graphs; Framework); TPUs and IPUs run compiled programs whose per-step cost
	// Perf.KernelSeconds holds.
	GPU bool
}

// Perf is what the analytic profiler needs to know of a device besides its memory and its
// dense 16-bit peak (Device.FLOPSPerSecond): the fp32 peak, the memory bandwidth, the
// fractions of peak that real kernels reach, and a fixed cost per kernel.
//
// The efficiencies are typical values for large kernels (a roofline times an efficiency
// is a model, not a measurement); every one can be overridden.
type Perf struct {
	// FP32FLOPSPerSecond is the dense fp32 matrix peak (what fp32 training runs at).
	FP32FLOPSPerSecond float64 `json:"fp32_flops_per_second"`
	// FP8FLOPSPerSecond is the dense fp8 matrix peak (Hopper, Blackwell, CDNA 3); 0 for a
	// device without fp8 matrix units.
	FP8FLOPSPerSecond float64 `json:"fp8_flops_per_second,omitempty"`
	// MemoryBytesPerSecond is the bandwidth of the device memory (HBM, or the IPU's
	// in-processor SRAM).
	MemoryBytesPerSecond float64 `json:"memory_bytes_per_second"`
	// MatmulEfficiency is the fraction of the peak FLOP/s that large 16-bit matrix
	// products reach (smaller ones reach less where Multiprocessors is set).
	MatmulEfficiency float64 `json:"matmul_efficiency"`
	// FP8MatmulEfficiency is the fraction of FP8FLOPSPerSecond that fp8 matrix products
	// reach, measured apart from the 16-bit one: published GEMM benchmarks find fp8
	// products well short of twice the 16-bit rate (a lower fraction of a peak twice as
	// high). 0 means MatmulEfficiency.
	FP8MatmulEfficiency float64 `json:"fp8_matmul_efficiency,omitempty"`
	// MXFP8 says the matrix units take microscaling fp8 (OCP MX: a shared 8-bit exponent
	// per 32 elements) at the fp8 rate: NVIDIA Blackwell, AMD CDNA 4.
	MXFP8 bool `json:"mxfp8,omitempty"`
	// BlockFP8 says block-wise scaled fp8 products (1 x 128 activation tiles, 128 x 128
	// weight blocks, as DeepSeek-V3 trained) run on the device: NVIDIA Hopper and
	// Blackwell (cuBLAS 12.9 and Transformer Engine 2.3's Float8BlockScaling).
	BlockFP8 bool `json:"block_fp8,omitempty"`
	// MemoryEfficiency is the fraction of MemoryBytesPerSecond that memory-bound kernels
	// (elementwise, norms, residuals, eager softmax, the optimizer update) reach: the
	// achievable bandwidth of a streaming kernel, not the datasheet's. STREAM-like
	// measurements land at 75-85% of HBM peak: BabelStream's copy and triad on an H100
	// NVL, 3.06 and 3.30 of 3.9 TB/s (78%, 85%); a CUDA memcpy on an A100 SXM4 80 GB, 1,536
	// of 2,039 GB/s (75%; AnjaliSandip/FastIceFlo, output/EffectiveMemoryThroughput.md);
	// NVIDIA's AIConfigurator likewise scales memory bandwidth by 0.8. The NVIDIA presets
	// take 0.8.
	MemoryEfficiency float64 `json:"memory_efficiency"`
	// KernelSeconds is the fixed cost of launching one kernel (or one compiled step).
	KernelSeconds float64 `json:"kernel_seconds"`
	// Multiprocessors is the number of streaming multiprocessors (NVIDIA SMs) a matrix
	// product's output tiles are spread over: with it the analytic profiler slows small
	// products by their wave quantization and short reductions (a product's shape,
	// core/analytic's gemmShape) below the large products' MatmulEfficiency. 0: every
	// product at MatmulEfficiency (devices without a measured shape model).
	Multiprocessors int `json:"multiprocessors,omitempty"`
	// HostSecondsScale is how much longer the host that usually drives the device
	// takes per operator than the x86 host of an H100 machine that the framework
	// modes' host figures (cluster.Framework's HostKernelSeconds, HostLayerSeconds and
	// OptimizerTensorSeconds) are stated for: package analytic multiplies them by it
	// (HostScale). The same Python, dispatcher and launch path runs slower on a slower
	// core. 0 means 1 (the reference host, or nothing known of the device's host).
	HostSecondsScale float64 `json:"host_seconds_scale,omitempty"`
}

// HostScale is HostSecondsScale, or 1 when it is 0.
func (p Perf) HostScale() float64 {
	if p.HostSecondsScale > 0 {
		return p.HostSecondsScale
	}
	return 1
}

// FP8Efficiency is the fraction of the fp8 peak that fp8 matrix products reach:
// FP8MatmulEfficiency, or MatmulEfficiency when it is 0.
func (p Perf) FP8Efficiency() float64 {
	if p.FP8MatmulEfficiency > 0 {
		return p.FP8MatmulEfficiency
	}
	return p.MatmulEfficiency
}

// Validate checks the figures; errors name the field under prefix ("perf").
func (p Perf) Validate(prefix string) error {
	var es model.Errors
	es.Positive(prefix+".fp32_flops_per_second", p.FP32FLOPSPerSecond)
	es.Positive(prefix+".memory_bytes_per_second", p.MemoryBytesPerSecond)
	es.NonNegative(prefix+".fp8_flops_per_second", p.FP8FLOPSPerSecond)
	if f := p.FP8MatmulEfficiency; !(f >= 0 && f <= 1) {
		es.Add(prefix+".fp8_matmul_efficiency", "must be in [0, 1] (0: matmul_efficiency), got %v", f)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"matmul_efficiency", p.MatmulEfficiency}, {"memory_efficiency", p.MemoryEfficiency}} {
		if !(f.v > 0 && f.v <= 1) {
			es.Add(prefix+"."+f.name, "must be in (0, 1], got %v", f.v)
		}
	}
	es.NonNegative(prefix+".kernel_seconds", p.KernelSeconds)
	es.NonNegative(prefix+".host_seconds_scale", p.HostSecondsScale)
	if p.Multiprocessors < 0 {
		es.Add(prefix+".multiprocessors", "must not be negative, got %d", p.Multiprocessors)
	}
	return es.Err()
}

// LinkPreset is a known interconnect, as alpha (latency) and bandwidth (beta is its
// inverse, Link.SecondsPerByte).
type LinkPreset struct {
	Name string
	Link
	// MeshBytesPerSecond is set where the link is a full mesh inside a node, one link
	// from each device to every other (AMD Infinity Fabric on an 8-GPU platform): what
	// the collective library's rings get from one of its links, per direction. A
	// collective of k devices of a node then runs on k-1 links at once
	// (Topology.IntraRing), where Link is one pair's link; 0 for a switched fabric
	// (NVSwitch), where Link's rate is any group's.
	MeshBytesPerSecond float64
	Note               string
}

// RCCL's figure for what one Infinity Fabric (xGMI) link carries per direction on CDNA
// 3 and CDNA 4, in bytes per second: GFX94X_XGMI_WIDTH and GFX95X_XGMI_WIDTH, 48.0 GB/s
// (ROCm/rocm-systems, projects/rccl/src/graph/topo.h at
// 03a89144e7d85d6824d0e27fabf9736814617f63; ncclTopoXGMISpeed picks it by gfx942 and
// gfx95*). RCCL sums a GPU's links into the topology's totalBw, which bounds its ring
// graphs' nChannels x bwIntra: "maxBw 48.0 totalBw 144.0" on four MI300Xs of three
// links each (ROCm/rccl#1210, RCCL's own NCCL_DEBUG=TRACE topology dump), so on eight,
// seven links each, 7 x 48 = 336 GB/s. AMD's RCCL engineers give the same 48 GB/s as
// what remains of the MI300X link's 64 GB/s after CRC and protocol overhead (AMD ROCm
// blog, "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X",
// 2025-03-02). RCCL's README says the converse for a group of fewer devices: "When
// using less than 8 GPUs, one can only achieve a fraction of the potential bandwidth"
// (ROCm/rccl#1270, "Improving performance on MI300 when using less than 8 GPUs"), as
// k-1 links of seven give. The analogue of NVLinkCollectiveBytesPerSecond's NCCL
// figure a link.
const rcclXGMILinkBytesPerSecond = 48.0e9

// SecondsPerByte is the link's beta in the alpha-beta model T = alpha + beta * n (Colossal-AUTO):
// the inverse of its bandwidth; 0 for a link without a bandwidth.
func (l Link) SecondsPerByte() float64 {
	if l.BytesPerSecond <= 0 {
		return 0
	}
	return 1 / l.BytesPerSecond
}

const (
	gib = 1 << 30
	mib = 1 << 20

	// gpuUsable leaves 5% of a device's memory to the runtime (CUDA/ROCm context,
	// communication buffers, allocator fragmentation; XLA's on TPUs) where nothing says
	// more: for measured profiles, and on TPUs. An architecture run by a GPU framework
	// counts the framework's fixed memory and its allocator's reserve explicitly instead
	// (cluster.Framework, core/request), with all of the memory usable.
	gpuUsable = 0.95
	// gpuKernelSeconds is a typical launch cost of one kernel from an eager framework
	// (a few microseconds); it matters only for small kernels.
	gpuKernelSeconds = 4e-6
	// graceHostScale is the host time per operator of a Grace CPU (Arm Neoverse V2, the
	// host of GH200, GB200 and GB300) over that of the Intel Xeon Platinum 8480C of a
	// DGX H100, as one benchmark measured both (NVIDIA/TransformerEngine #2053, "High
	// CPU overhead on Grace systems", 2025-08-11: the CPU time of one torch.nn.Linear
	// forward in BF16, hidden 2,048 and 8,192 tokens, averaged over many runs: 37.08 us
	// on GB200, 33.17 on GH200, 13.48 on the DGX H100). The same PyTorch call (Python,
	// the dispatcher, cuBLAS's launch) takes 2.75 times as long on GB200's host and 2.46
	// times on GH200's; GB200's ratio is taken for the Grace-hosted presets (GB300
	// pairs the same Grace CPU with its GPUs: GB300 NVL72 datasheet). Transformer
	// Engine's own module code is slower still on Grace there (te.Linear 99.66 us on
	// GB200, 90.53 on GH200: 2.7 times torch's), a per-module cost this figure does not
	// add (TE has since cut it: TE #2146, #2439, #2957). The issue gives no other
	// hosts; x86 hosts of B200 and B300 boards are left at 1.
	graceHostScale = 37.08 / 13.48
)

// Fractions of the fp8 peak that fp8 GEMMs reach (Perf.FP8MatmulEfficiency), from
// published benchmarks of the same shapes in bf16 and fp8, not from the datasheets' 2:1:
//
//   - Hopper (H100, H200): the products alone, the quantization of their inputs being
//     priced as kernels of its own (package analytic, shape.linear). Single products
//     measured with cuBLAS (torch._scaled_mm against torch.matmul, per-tensor scales) on
//     an H100 SXM and an H200 (core/request/testdata/measured_h100_steps.json and
//     measured_h200_steps.json, "gemm"; TestGEMMShapeModel's fit) plateau at 1,315 and
//     1,335 TFLOP/s in fp8 against 725 and 740 in bf16: 1.81 times bf16's rate, so at
//     1.8 times bf16's 0.7 of 989 TFLOP/s fp8 reaches 0.63 of 1,979 (0.66 to 0.67 at
//     the plateaus themselves). Published te.Linear comparisons, whose times include
//     the quantization, find 1.5 to 2 times bf16 (ROCm/TransformerEngine issue 73, the
//     H100 comparison in its thread; vllm-project/vllm pull 49363, H100, Gemma-4-31B's
//     shapes: 1.65 times at 128 rows, 1.8 at 256).
//   - Blackwell (B200, B300, GB200, GB300): fp8 GEMMs 1.17 times bf16 at 256 rows on
//     Llama-3.3-70B's shapes (vllm-project/vllm pull 20071, SM100), rising with the rows;
//     training's GEMMs (8,192 rows and more) are taken at 1.6 times too: 0.52 of the fp8
//     peak against bf16's 0.65.
//   - CDNA 3 (MI300X, MI325X): the products alone, as on Hopper. AMD's published
//     Max-Achievable FLOPs (ROCm blogs, "Measuring Max-Achievable FLOPs - Part 2",
//     hipBLASLt commit db8e93b4fd6, ROCm 6.3, February 2025; hipblaslt-bench on
//     M=4096, N=4864 (fp8: 3648), K=32896) are 708 TFLOP/s bf16 and 1,273 fp8 on
//     the MI300X, 843 and 1,519 on the MI325X: fp8 1.80 times bf16 on both. The
//     MI300X's bf16 stays at 0.45 (the MAF, 0.54 of the peak, is the best shape's
//     ceiling, not a training product's rate), so fp8 is 1.80 times 0.45 over the
//     2:1 peak, 0.40 of the fp8 peak (mi300xFP8Efficiency). The earlier 0.27 came
//     from late-2024 te.Linear timings that include the quantization, which package
//     analytic prices as kernels of its own (ROCm/TransformerEngine issues 72 and
//     73: fp8 te.Linear about at parity with bf16). The MI325X is the same silicon
//     at a higher sustained clock (1,447 against 1,207 MHz in bf16's MAF): its
//     efficiencies are the MI300X's times the two parts' MAF ratio, 843/708 in bf16
//     (0.54) and 1,519/1,273 in fp8 (0.48).
//   - CDNA 4 (MI355X): products measured with rocBLAS through PyTorch 2.9.1 on ROCm
//     7.2 (torch.matmul, and torch._scaled_mm with per-tensor scales) on an MI355X at
//     1,400 W with 256 CUs (amdpilot-org/FlyDSL, reports/j-a316d12f686f/REPORT.md at
//     f75881d): 1,411 TFLOP/s bf16 and 3,123 fp8 (medians of 100) on 8192 x 8192 x
//     8192 (a later revision's three-run means, 1,417 and 3,089, agree), 0.56 of the 2.5
//     PFLOP/s bf16 peak and 0.62 of the 5 PFLOP/s fp8 peak (mi355xMatmulEfficiency,
//     mi355xFP8Efficiency). fp8 is 2.2 times bf16 there, above the datasheets' 2:1.
//     MXFP8 products are taken at the fp8 figure: the datasheet gives them the fp8
//     rate and no MXFP8 GEMM measurement was found.
//
// Streaming multiprocessors of NVIDIA's data-centre GPUs (Perf.Multiprocessors): 108 on
// the A100 (NVIDIA A100 Tensor Core GPU Architecture whitepaper), 132 on the H100 SXM5
// and the H200 (NVIDIA H100 Tensor Core GPU Architecture whitepaper; the measured H100
// and H200 report 132, core/request/testdata/measured_h100_steps.json), 148 on the B200
// (two dies of the 160-SM design, as shipped); Blackwell Ultra (B300, GB300) is taken at
// the B200's 148 too, its shipping count not being published beside the full design's
// 160 (NVIDIA's Hot Chips 2025 Blackwell Ultra article).
const (
	a100SMs      = 108
	hopperSMs    = 132
	blackwellSMs = 148
)

const (
	hopperFP8Efficiency    = 0.63
	blackwellFP8Efficiency = 0.52
	gb200FP8Efficiency     = blackwellFP8Efficiency * (gb200MAMFFP8 / 5000) / (b200MAMFFP8 / 4500)
	mi300xFP8Efficiency    = 0.40
	mi325xFP8Efficiency    = 0.48
	mi355xFP8Efficiency    = 0.62
)

// The GB200's GEMM fractions are the B200's times the two parts' Maximum Achievable
// Matmul FLOPS as fractions of their peaks (Bekman, "Machine Learning Engineering",
// compute/accelerator/README.md, the MAMF comparison table, GB200 row of 2025-09-17:
// mamf-finder.py's best shape, mean of 100 matmuls): 1,822 TFLOP/s bf16 of the
// GB200's 2,500 (72.9%) against 1,745 of the B200's 2,250 (77.6%), and 3,615.6 fp8
// of 5,000 (72.3%) against 3,432.5 of 4,500 (76.3%). The Blackwell fractions (0.65
// bf16, blackwellFP8Efficiency) are the B200's: the shape model's rate checked on
// OpenXLA's measured B200 products (package analytic, TestGEMMShapeModelBlackwell)
// and vLLM's SM100 fp8/bf16 ratio. The GB200 NVL72 datasheet's 2.5 PFLOP/s (11%
// over the B200's 2.25) buys 4.4% more bf16 matmul throughput (5.3% fp8) measured,
// not 11%: 0.611 and 0.493 of its peaks. The MAMF comparison measures no GB300; its
// B300 row (1,769 bf16, 3,353.3 fp8, both of the B200's peaks) is within 1.4% and
// 2.3% of the B200's, so the B300 keeps the B200's fractions, and the GB300 keeps
// them of its 2.5 PFLOP/s datasheet peak for want of a measurement (NVIDIA does not
// publish its sustained clock at 1,400 W against the GB200's 1,200 W).
const (
	b200MAMFBF16, b200MAMFFP8   = 1745.0, 3432.5 // TFLOP/s
	gb200MAMFBF16, gb200MAMFFP8 = 1822.0, 3615.6
	blackwellMatmulEfficiency   = 0.65
	gb200MatmulEfficiency       = blackwellMatmulEfficiency * (gb200MAMFBF16 / 2500) / (b200MAMFBF16 / 2250)
)

// Fractions of the 16-bit peak that large bf16 products reach on AMD Instinct parts
// (Perf.MatmulEfficiency; their presets have no shape model): the MI300X's 0.45 from
// GEMM benchmarks well under half its peak (below AMD's 708 TFLOP/s MAF, 0.54, the
// best shape's ceiling), the MI325X's that times the MAF ratio 843/708, the MI355X's
// measured at 8192 x 8192 x 8192 (see the fp8 fractions above).
const (
	mi300xMatmulEfficiency = 0.45
	mi325xMatmulEfficiency = 0.54
	mi355xMatmulEfficiency = 0.56
)

// Memory sizes: vendors' "GB" for HBM are binary (an 80 GB A100 shows 81920 MiB in
// nvidia-smi), so presets store them as GiB.
var devicePresets = map[string]DevicePreset{
	// NVIDIA A100 SXM4 40 GB (A100 datasheet, 2021): 312 TFLOP/s dense bf16/fp16 tensor,
	// 19.5 TFLOP/s fp32 (without TF32), 1,555 GB/s HBM2. NVLink 3 (600 GB/s total).
	"a100-40gb": {
		Device:  Device{Name: "a100-40gb", MemoryBytes: 40 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 312e12},
		Perf:    Perf{FP32FLOPSPerSecond: 19.5e12, MemoryBytesPerSecond: 1555e9, MatmulEfficiency: 0.75, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: a100SMs},
		Link:    "nvlink3",
		Network: "ib-hdr",
		GPU:     true,
		// DGX A100: each HDR ConnectX-6 on a PCIe Gen4 x16 switch beside its GPU.
		NICPCIeBytesPerSecond: pcieGen4x16NCCL,
		Note:                  "NVIDIA A100 datasheet: 312 TFLOP/s bf16 dense, 19.5 TFLOP/s fp32, 1,555 GB/s HBM2",
	},
	// NVIDIA A100 SXM4 80 GB (A100 datasheet): as the 40 GB part with 2,039 GB/s HBM2e.
	"a100-80gb": {
		Device:  Device{Name: "a100-80gb", MemoryBytes: 80 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 312e12},
		Perf:    Perf{FP32FLOPSPerSecond: 19.5e12, MemoryBytesPerSecond: 2039e9, MatmulEfficiency: 0.75, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: a100SMs},
		Link:    "nvlink3",
		Network: "ib-hdr",
		GPU:     true,
		// DGX A100: each HDR ConnectX-6 on a PCIe Gen4 x16 switch beside its GPU.
		NICPCIeBytesPerSecond: pcieGen4x16NCCL,
		Note:                  "NVIDIA A100 datasheet: 312 TFLOP/s bf16 dense, 19.5 TFLOP/s fp32, 2,039 GB/s HBM2e",
	},
	// NVIDIA H100 SXM5 80 GB (H100 datasheet): 989 TFLOP/s dense bf16 (1,979 with
	// sparsity), 1,979 dense fp8, 67 TFLOP/s fp32, 3.35 TB/s HBM3. NVLink 4 (900 GB/s
	// total), 8 GPUs on the NVSwitches of an HGX/DGX H100 board (DGX H100 datasheet), one
	// 400 Gb/s ConnectX-7 port per GPU. Large bf16 GEMMs reach about 65-75% of the dense
	// peak. fp8: see h100FP8Efficiency.
	"h100-sxm": {
		Device:         Device{Name: "h100-sxm", MemoryBytes: 80 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 989e12},
		Perf:           Perf{FP32FLOPSPerSecond: 67e12, FP8FLOPSPerSecond: 1979e12, MemoryBytesPerSecond: 3.35e12, MatmulEfficiency: 0.7, FP8MatmulEfficiency: hopperFP8Efficiency, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: hopperSMs},
		Link:           "nvlink4",
		Network:        "ib-ndr",
		ScaleUpDevices: 8,
		GPU:            true,
		// HGX board: each NIC on a PCIe Gen5 x16 switch beside its GPU.
		NICPCIeBytesPerSecond: pcieGen5x16NCCL,
		Note:                  "NVIDIA H100 SXM datasheet: 989 TFLOP/s bf16 dense, 1,979 fp8 dense, 67 TFLOP/s fp32, 3.35 TB/s HBM3; NVLink 4 900 GB/s, 8 per HGX board (DGX H100 datasheet); 400 Gb/s NIC per GPU",
	},
	// NVIDIA H100 SXM5 96 GB HBM2e at the 500 W power limit, as Meta's Grand Teton hosts
	// run it (pytorch/torchtitan, benchmarks/llama3_h100_202412_torchtitan.md: "96GB
	// HBM2e with 2.4 TB/sec peak memory bandwidth", "the default 500W power limit", and
	// "the actual peak TFLOPs number is between SXM and NVL, and we don't know its exact
	// value"): the midpoint of the SXM's 989 and the H100 NVL's 835 TFLOP/s dense bf16
	// (H100 datasheet), 912, an assumption; fp8 twice that. The same board of 8 on
	// NVLink 4, a 400 Gb/s RDMA NIC per GPU.
	"h100-96gb-500w": {
		Device:         Device{Name: "h100-96gb-500w", MemoryBytes: 96 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 912e12},
		Perf:           Perf{FP32FLOPSPerSecond: 62e12, FP8FLOPSPerSecond: 1824e12, MemoryBytesPerSecond: 2.4e12, MatmulEfficiency: 0.7, FP8MatmulEfficiency: hopperFP8Efficiency, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: hopperSMs},
		Link:           "nvlink4",
		Network:        "roce-400g",
		ScaleUpDevices: 8,
		GPU:            true,
		// HGX board: each NIC on a PCIe Gen5 x16 switch beside its GPU.
		NICPCIeBytesPerSecond: pcieGen5x16NCCL,
		Note:                  "H100 SXM5 96 GB HBM2e at 500 W (Grand Teton, torchtitan's benchmarks): between the SXM's 989 and the NVL's 835 TFLOP/s bf16 dense, 912 assumed; 2.4 TB/s; NVLink 4, 8 per board; 400 Gb/s RDMA per GPU",
	},
	// NVIDIA H200 SXM 141 GB (H200 datasheet): H100's compute (989 TFLOP/s dense bf16,
	// 1,979 dense fp8) with 4.8 TB/s HBM3e; the same NVLink 4 board of 8 (HGX H200).
	"h200": {
		Device:         Device{Name: "h200", MemoryBytes: 141 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 989e12},
		Perf:           Perf{FP32FLOPSPerSecond: 67e12, FP8FLOPSPerSecond: 1979e12, MemoryBytesPerSecond: 4.8e12, MatmulEfficiency: 0.7, FP8MatmulEfficiency: hopperFP8Efficiency, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: hopperSMs},
		Link:           "nvlink4",
		Network:        "ib-ndr",
		ScaleUpDevices: 8,
		GPU:            true,
		// HGX board: each NIC on a PCIe Gen5 x16 switch beside its GPU.
		NICPCIeBytesPerSecond: pcieGen5x16NCCL,
		Note:                  "NVIDIA H200 datasheet: 989 TFLOP/s bf16 dense, 1,979 fp8 dense, 67 TFLOP/s fp32, 141 GB at 4.8 TB/s HBM3e; NVLink 4 900 GB/s, 8 per HGX board; 400 Gb/s NIC per GPU",
	},
	// NVIDIA B200 in HGX B200 (HGX datasheet: 8 GPUs with 1.44 TB at 62 TB/s in all, 36
	// PFLOP/s fp16 with sparsity): per GPU 180 GB, 7.7 TB/s, 2.25 PFLOP/s dense bf16, 4.5
	// dense fp8 (and MXFP8 at that rate); fp32 about 75 TFLOP/s. NVLink 5 (1.8 TB/s total)
	// through the board's NVLink switches; DGX B200 has one 400 Gb/s ConnectX-7 port per
	// GPU (DGX B200 datasheet).
	"b200": {
		Device:         Device{Name: "b200", MemoryBytes: 180 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 2.25e15},
		Perf:           Perf{FP32FLOPSPerSecond: 75e12, FP8FLOPSPerSecond: 4.5e15, MemoryBytesPerSecond: 7.7e12, MatmulEfficiency: blackwellMatmulEfficiency, FP8MatmulEfficiency: blackwellFP8Efficiency, MXFP8: true, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: blackwellSMs},
		Link:           "nvlink5",
		Network:        "ib-ndr",
		ScaleUpDevices: 8,
		GPU:            true,
		// HGX board: each NIC on a PCIe Gen5 x16 switch beside its GPU.
		NICPCIeBytesPerSecond: pcieGen5x16NCCL,
		Note:                  "NVIDIA HGX B200 datasheet, per GPU: 2.25 PFLOP/s bf16 dense, 4.5 fp8 dense, 180 GB at 7.7 TB/s HBM3e; NVLink 5 1.8 TB/s, 8 per board; DGX B200: 400 Gb/s NIC per GPU",
	},
	// NVIDIA B300 (Blackwell Ultra) in HGX B300 (NVIDIA Blackwell Ultra datasheet): per
	// GPU 2.25 PFLOP/s dense bf16, 4.5 dense fp8/MXFP8, 288 GB HBM3e at 8 TB/s (7.75
	// quoted per GPU on some boards), NVLink 5 through the board's switches, 8 per board;
	// DGX B300 has one 800 Gb/s ConnectX-8 SuperNIC per GPU.
	"b300": {
		Device:         Device{Name: "b300", MemoryBytes: 288 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 2.25e15},
		Perf:           Perf{FP32FLOPSPerSecond: 75e12, FP8FLOPSPerSecond: 4.5e15, MemoryBytesPerSecond: 7.75e12, MatmulEfficiency: blackwellMatmulEfficiency, FP8MatmulEfficiency: blackwellFP8Efficiency, MXFP8: true, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: blackwellSMs},
		Link:           "nvlink5",
		Network:        "ib-xdr",
		ScaleUpDevices: 8,
		GPU:            true,
		Note:           "NVIDIA HGX B300 (Blackwell Ultra datasheet), per GPU: 2.25 PFLOP/s bf16 dense, 4.5 fp8 dense, 288 GB at 7.75 TB/s HBM3e; NVLink 5, 8 per board; DGX B300: 800 Gb/s ConnectX-8 per GPU",
	},
	// NVIDIA GB200 NVL72, per GPU (GB200 NVL72 datasheet: 72 Blackwell GPUs in one NVLink
	// domain, 130 TB/s of NVLink in all, 13.4 TB HBM3e, 360 PFLOP/s fp16 and 720 fp8 with
	// sparsity): 2.5 PFLOP/s dense bf16, 5 dense fp8/MXFP8, 186 GB at 8 TB/s, NVLink 5
	// 1.8 TB/s to any of the 72 through the NVLink Switch trays; a 400 Gb/s ConnectX-7
	// port per GPU to the scale-out network in NVIDIA's reference design. Its matrix
	// products reach the B200's fractions times their measured MAMF ratio
	// (gb200MatmulEfficiency, gb200FP8Efficiency), not the datasheet's 2.5/2.25.
	"gb200": {
		Device:         Device{Name: "gb200", MemoryBytes: 186 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 2.5e15},
		Perf:           Perf{FP32FLOPSPerSecond: 80e12, FP8FLOPSPerSecond: 5e15, MemoryBytesPerSecond: 8e12, MatmulEfficiency: gb200MatmulEfficiency, FP8MatmulEfficiency: gb200FP8Efficiency, MXFP8: true, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: blackwellSMs, HostSecondsScale: graceHostScale},
		Link:           "nvswitch4",
		Network:        "ib-ndr",
		ScaleUpDevices: 72,
		GPU:            true,
		Note:           "NVIDIA GB200 NVL72 datasheet, per GPU: 2.5 PFLOP/s bf16 dense, 5 fp8 dense, 186 GB at 8 TB/s HBM3e; matmuls at the B200's fractions times the measured MAMF ratio (1,822/1,745 bf16, 3,615.6/3,432.5 fp8: ml-engineering's MAMF table), 4-5% over the B200, not 11%; NVLink 5 1.8 TB/s, 72 GPUs in one NVLink domain; 400 Gb/s NIC per GPU; Grace host: 2.75 times an H100 machine's x86 host time per PyTorch call (TransformerEngine #2053)",
	},
	// NVIDIA GB300 NVL72, per GPU (GB300 NVL72 datasheet: 72 Blackwell Ultra GPUs in one
	// NVLink domain, 20 TB HBM3e, 360 PFLOP/s fp16 and 720 fp8 with sparsity): 2.5
	// PFLOP/s dense bf16, 5 dense fp8/MXFP8, 279 GB at 8 TB/s, NVLink 5 to any of the
	// 72; an 800 Gb/s ConnectX-8 SuperNIC per GPU.
	"gb300": {
		Device:         Device{Name: "gb300", MemoryBytes: 279 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 2.5e15},
		Perf:           Perf{FP32FLOPSPerSecond: 80e12, FP8FLOPSPerSecond: 5e15, MemoryBytesPerSecond: 8e12, MatmulEfficiency: blackwellMatmulEfficiency, FP8MatmulEfficiency: blackwellFP8Efficiency, MXFP8: true, BlockFP8: true, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds, Multiprocessors: blackwellSMs, HostSecondsScale: graceHostScale},
		Link:           "nvswitch4",
		Network:        "ib-xdr",
		ScaleUpDevices: 72,
		GPU:            true,
		// GB300 compute tray: each ConnectX-8 SuperNIC joins its Blackwell Ultra GPU on a
		// PCIe Gen6 x16 link and Grace on Gen5 x16 (NVIDIA's ConnectX-8 talk at Hot Chips
		// 2025: GB300 NVL72 is the first deployment of the Gen6 SuperNIC). NCCL takes the
		// GPU's link: ConnectX-8 firmware exposes a Data Direct DMA function beside the
		// GPU "to overcome grace CPU PCIe bandwidth" (firmware release notes 40.44), and
		// NCCL's IB transport exposes only that data-direct NIC by default
		// (src/transport/net_ib.cc at v2.28.3-1, NCCL_IB_DATA_DIRECT=1: "data direct
		// devices are exposed twice: with the C2C + PCIe link and with the data direct
		// link"), so each channel settles at min(96, 100) GB/s.
		NICPCIeBytesPerSecond: pcieGen6x16NCCL,
		Note:                  "NVIDIA GB300 NVL72 datasheet, per GPU: 2.5 PFLOP/s bf16 dense, 5 fp8 dense, 279 GB at 8 TB/s HBM3e; NVLink 5 1.8 TB/s, 72 GPUs in one NVLink domain; 800 Gb/s ConnectX-8 per GPU; Grace host: 2.75 times an H100 machine's x86 host time per PyTorch call (TransformerEngine #2053)",
	},
	// AMD Instinct MI300X (AMD datasheet): 1,307.4 TFLOP/s dense bf16, 2,614.9 dense fp8,
	// 163.4 TFLOP/s fp32 matrix, 192 GB HBM3 at 5.3 TB/s; Infinity Fabric to each of 7
	// peers (8 GPUs per platform, 896 GB/s aggregate). Published GEMM benchmarks reach
	// well under half of the bf16 peak, hence the low efficiency; fp8: see
	// mi300xFP8Efficiency.
	"mi300x": {
		Device:         Device{Name: "mi300x", MemoryBytes: 192 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 1307.4e12},
		Perf:           Perf{FP32FLOPSPerSecond: 163.4e12, FP8FLOPSPerSecond: 2614.9e12, MemoryBytesPerSecond: 5.3e12, MatmulEfficiency: mi300xMatmulEfficiency, FP8MatmulEfficiency: mi300xFP8Efficiency, MemoryEfficiency: 0.7, KernelSeconds: 6e-6},
		Link:           "xgmi",
		Network:        "roce-400g",
		ScaleUpDevices: 8,
		GPU:            true,
		Note:           "AMD MI300X datasheet: 1,307 TFLOP/s bf16 dense, 2,615 fp8 dense, 163 TFLOP/s fp32, 192 GB at 5.3 TB/s HBM3; Infinity Fabric 896 GB/s aggregate, 8 per platform; fp8 products 1.80 times bf16 (AMD's Max-Achievable FLOPs, hipBLASLt, ROCm 6.3)",
	},
	// AMD Instinct MI325X (AMD datasheet, CDNA 3): the MI300X's compute (1,307.4 TFLOP/s
	// dense bf16, 2,614.9 dense fp8, 163.4 TFLOP/s fp32 matrix, 304 CUs) at 1,000 W with
	// 256 GB HBM3E at 6 TB/s; a drop-in for the MI300X platform (7 Infinity Fabric links,
	// 8 GPUs). Efficiencies: mi325xMatmulEfficiency, mi325xFP8Efficiency.
	"mi325x": {
		Device:         Device{Name: "mi325x", MemoryBytes: 256 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 1307.4e12},
		Perf:           Perf{FP32FLOPSPerSecond: 163.4e12, FP8FLOPSPerSecond: 2614.9e12, MemoryBytesPerSecond: 6e12, MatmulEfficiency: mi325xMatmulEfficiency, FP8MatmulEfficiency: mi325xFP8Efficiency, MemoryEfficiency: 0.7, KernelSeconds: 6e-6},
		Link:           "xgmi",
		Network:        "roce-400g",
		ScaleUpDevices: 8,
		GPU:            true,
		Note:           "AMD MI325X datasheet: 1,307 TFLOP/s bf16 dense, 2,615 fp8 dense, 163 TFLOP/s fp32, 256 GB at 6 TB/s HBM3E; Infinity Fabric as the MI300X's, 8 per platform; GEMMs at the MI300X's fractions times AMD's Max-Achievable FLOPs ratio (843/708 bf16, 1,519/1,273 fp8)",
	},
	// AMD Instinct MI355X (AMD datasheet, CDNA 4): 2.5 PFLOP/s dense fp16/bf16, 5.0 dense
	// fp8 and MXFP8 (OCP MX formats in the matrix cores), 157.3 TFLOP/s fp32 matrix, 288
	// GB HBM3E at 8 TB/s; 7 Infinity Fabric links of 153.6 GB/s (1,075 GB/s aggregate), 8
	// GPUs per platform; a 400 Gb/s NIC (AMD Pensando Pollara 400) per GPU. GEMM
	// efficiencies from rocBLAS products measured on ROCm 7.2: mi355xMatmulEfficiency,
	// mi355xFP8Efficiency.
	"mi355x": {
		Device:         Device{Name: "mi355x", MemoryBytes: 288 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 2.5e15},
		Perf:           Perf{FP32FLOPSPerSecond: 157.3e12, FP8FLOPSPerSecond: 5e15, MemoryBytesPerSecond: 8e12, MatmulEfficiency: mi355xMatmulEfficiency, FP8MatmulEfficiency: mi355xFP8Efficiency, MXFP8: true, MemoryEfficiency: 0.7, KernelSeconds: 6e-6},
		Link:           "xgmi4",
		Network:        "roce-400g",
		ScaleUpDevices: 8,
		GPU:            true,
		Note:           "AMD MI355X datasheet: 2.5 PFLOP/s bf16 dense, 5 fp8/MXFP8 dense, 157 TFLOP/s fp32, 288 GB at 8 TB/s HBM3E; Infinity Fabric 7 x 153.6 GB/s, 8 per platform; 400 Gb/s NIC per GPU; GEMMs at 0.56 of the bf16 peak, 0.62 of the fp8 (rocBLAS, 8192 x 8192 x 8192, ROCm 7.2)",
	},
	// Intel Gaudi 3 (HL-325L OAM; Intel Gaudi 3 AI accelerator white paper): 1,835
	// TFLOP/s bf16 and the same in fp8 from its matrix engines (fp8 brings no rate gain,
	// only memory), 128 GB HBM2e at 3.7 TB/s; 24 x 200 GbE RoCE ports on the die: in an
	// 8-card server 21 join the cards all-to-all (3 per peer, 600 Gb/s = 75 GB/s per
	// direction) and 3 go out (75 GB/s per card). fp32 matrix rate taken as an eighth of
	// bf16 (an assumption: no figure found). Efficiencies as the H100's (none published).
	"gaudi3": {
		Device:         Device{Name: "gaudi3", MemoryBytes: 128 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 1835e12},
		Perf:           Perf{FP32FLOPSPerSecond: 1835e12 / 8, FP8FLOPSPerSecond: 1835e12, MemoryBytesPerSecond: 3.7e12, MatmulEfficiency: 0.7, FP8MatmulEfficiency: 0.7, MemoryEfficiency: 0.8, KernelSeconds: gpuKernelSeconds},
		Link:           "gaudi3-roce",
		Network:        "gaudi3-roce",
		ScaleUpDevices: 8,
		Note:           "Intel Gaudi 3 white paper: 1,835 TFLOP/s bf16 and fp8, 128 GB at 3.7 TB/s HBM2e; 24 x 200 GbE RoCE on die: 3 per peer in an 8-card server, 3 out",
	},
	// AWS Trainium2 (AWS Trn2 instance documentation): per chip 667 TFLOP/s dense bf16,
	// 1,299 dense fp8, 96 GiB HBM at 2.9 TB/s; 16 chips per trn2.48xlarge on NeuronLink-v3
	// (a 2-D torus, 1 TB/s per chip; 64 in a Trn2 UltraServer), and 3.2 Tb/s of EFAv3 per
	// instance (200 Gb/s per chip). Compiled (Neuron): a small per-step cost; GEMM
	// efficiencies as the TPUs' (none published).
	"trainium2": {
		Device:         Device{Name: "trainium2", MemoryBytes: 96 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 667e12},
		Perf:           Perf{FP32FLOPSPerSecond: 181e12, FP8FLOPSPerSecond: 1299e12, MemoryBytesPerSecond: 2.9e12, MatmulEfficiency: 0.7, FP8MatmulEfficiency: 0.6, MemoryEfficiency: 0.8, KernelSeconds: 1e-6},
		Link:           "neuronlink-v3",
		Network:        "efa-v3",
		ScaleUpDevices: 16,
		Note:           "AWS Trn2 docs, per chip: 667 TFLOP/s bf16 dense, 1,299 fp8 dense, 181 TFLOP/s fp32, 96 GiB at 2.9 TB/s; NeuronLink-v3 1 TB/s per chip, 16 per trn2.48xlarge; EFAv3 3.2 Tb/s per instance",
	},
	// Google TPU v4 (Cloud TPU docs, "TPU v4"): 275 TFLOP/s bf16, 32 GiB HBM2 at
	// 1,200 GB/s. No fp32 matrix peak is published: fp32 matmuls at the highest precision
	// take six bf16 passes, so fp32 is taken as a sixth of the bf16 peak. XLA compiles a
	// step into few fused kernels: a small per-kernel cost.
	"tpu-v4": {
		Device: Device{Name: "tpu-v4", MemoryBytes: 32 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 275e12},
		Perf:   Perf{FP32FLOPSPerSecond: 275e12 / 6, MemoryBytesPerSecond: 1200e9, MatmulEfficiency: 0.8, MemoryEfficiency: 0.85, KernelSeconds: 1e-6},
		Link:   "tpu-ici",
		Note:   "Cloud TPU v4 docs: 275 TFLOP/s bf16, 32 GiB HBM2 at 1,200 GB/s; fp32 assumed bf16/6",
	},
	// Google TPU v5e (Cloud TPU docs, "TPU v5e"): 197 TFLOP/s bf16, 16 GiB HBM2 at 819 GB/s.
	"tpu-v5e": {
		Device: Device{Name: "tpu-v5e", MemoryBytes: 16 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 197e12},
		Perf:   Perf{FP32FLOPSPerSecond: 197e12 / 6, MemoryBytesPerSecond: 819e9, MatmulEfficiency: 0.8, MemoryEfficiency: 0.85, KernelSeconds: 1e-6},
		Link:   "tpu-ici",
		Note:   "Cloud TPU v5e docs: 197 TFLOP/s bf16, 16 GiB HBM2 at 819 GB/s; fp32 assumed bf16/6",
	},
	// Google TPU v5p (Cloud TPU docs, "TPU v5p"): 459 TFLOP/s bf16 (fp8 listed at the
	// same 459: no rate gain, so no fp8 preset figure), 95 GiB HBM2e at 2,765 GB/s, ICI
	// 1,200 GB/s per chip bidirectional over six links of a 3-D torus, 8,960 chips per pod
	// (slices up to 6,144); data-center network 50 Gb/s per chip.
	"tpu-v5p": {
		Device:         Device{Name: "tpu-v5p", MemoryBytes: 95 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 459e12},
		Perf:           Perf{FP32FLOPSPerSecond: 459e12 / 6, MemoryBytesPerSecond: 2765e9, MatmulEfficiency: 0.8, MemoryEfficiency: 0.85, KernelSeconds: 1e-6},
		Link:           "tpu-ici-v5p",
		Network:        "tpu-dcn-50g",
		ScaleUpDevices: 6144,
		Note:           "Cloud TPU v5p docs: 459 TFLOP/s bf16, 95 GiB HBM2e at 2,765 GB/s, ICI 1,200 GB/s per chip (3-D torus), slices up to 6,144 chips, DCN 50 Gb/s per chip; fp32 assumed bf16/6",
	},
	// Google TPU v6e, Trillium (Cloud TPU docs, "TPU v6e"): 918 TFLOP/s bf16 (1,836 int8;
	// no fp8 rate), 32 GB HBM at 1,638 GB/s, ICI 800 GB/s per chip bidirectional over 4
	// ports of a 2-D torus, 256 chips per pod, 8 per host.
	"tpu-v6e": {
		Device:         Device{Name: "tpu-v6e", MemoryBytes: 32 * gib, UsableFraction: gpuUsable, FLOPSPerSecond: 918e12},
		Perf:           Perf{FP32FLOPSPerSecond: 918e12 / 6, MemoryBytesPerSecond: 1638e9, MatmulEfficiency: 0.8, MemoryEfficiency: 0.85, KernelSeconds: 1e-6},
		Link:           "tpu-ici-v6e",
		ScaleUpDevices: 256,
		Note:           "Cloud TPU v6e docs: 918 TFLOP/s bf16, 32 GB HBM at 1,638 GB/s, ICI 800 GB/s per chip over 4 ports (2-D torus), 256 chips per pod; fp32 assumed bf16/6",
	},
	// Graphcore GC200 IPU (Colossus Mk2; IPU-M2000 datasheet): 1,472 tiles with 624 KiB
	// each ("900 MB" In-Processor-Memory) at 47.5 TB/s, 250 TFLOP/s fp16, 62.5 TFLOP/s
	// fp32, 1.33 GHz. Graphcore's auto-pipeline tool plans against 894 MiB, which is what is stored (all
	// of it usable). Programs are compiled: the per-step cost is small.
	"gc200": {
		Device: Device{Name: "gc200", MemoryBytes: 894 * mib, ClockHz: 1.33e9, FLOPSPerSecond: 250e12},
		Perf:   Perf{FP32FLOPSPerSecond: 62.5e12, MemoryBytesPerSecond: 47.5e12, MatmulEfficiency: 0.5, MemoryEfficiency: 0.5, KernelSeconds: 0.5e-6},
		Link:   "ipu-link",
		Note:   "Graphcore IPU-M2000 datasheet: 250 TFLOP/s fp16, 62.5 TFLOP/s fp32, 900 MB SRAM at 47.5 TB/s, 1.33 GHz; 894 MiB as Graphcore's auto-pipeline tool uses",
	},
	// Graphcore Bow IPU (Bow-2000 datasheet): the GC200 with wafer-on-wafer power
	// delivery: 350 TFLOP/s fp16, 87.5 TFLOP/s fp32, 65 TB/s memory bandwidth, 1.85 GHz.
	"bow": {
		Device: Device{Name: "bow", MemoryBytes: 894 * mib, ClockHz: 1.85e9, FLOPSPerSecond: 350e12},
		Perf:   Perf{FP32FLOPSPerSecond: 87.5e12, MemoryBytesPerSecond: 65e12, MatmulEfficiency: 0.5, MemoryEfficiency: 0.5, KernelSeconds: 0.5e-6},
		Link:   "ipu-link",
		Note:   "Graphcore Bow-2000 datasheet: 350 TFLOP/s fp16, 87.5 TFLOP/s fp32, 900 MB SRAM at 65 TB/s, 1.85 GHz; 894 MiB as for gc200",
	},
}

// opaNCCLBusBytesPerSecond is the bus bandwidth of BigScience's 4-node all-reduce on Jean
// Zay's A100 nodes (the opa-nccl preset): 4.0 GB (M x N = 2000 x 500,000 fp32) among 32
// GPUs in 1.529 s, 2(n-1)/n of the size moved per rank, as nccl-tests' PERFORMANCE.md
// and the benchmark itself compute busbw.
const opaNCCLBusBytesPerSecond = 4.0e9 * 2 * 31 / 32 / 1.529

// Links: bandwidth is one direction of a point-to-point transfer between two devices, as a
// device sees it: for the scale-up fabrics (NVLink, NVSwitch, Infinity Fabric, IPU-Link,
// ICI) the device's own share, for the scale-out networks (InfiniBand, RoCE) one port of
// one network interface, as in rail-optimised nodes with one NIC per device (DGX A100
// and DGX H100 have 8 ConnectX NICs for 8 GPUs). Line rates are the wire's, after its
// line coding; what NCCL reaches on top is the caller's efficiency to apply. The NVLink
// and NVSwitch presets are the exception: their bandwidth is what NCCL's collectives
// get from the GPU's NVLinks (NVLinkCollectiveBytesPerSecond: NCCL's own figure a
// link, about 0.8 of the wire's), so every collective and copy over them, tensor,
// context, expert and data-parallel, pipeline sends, is priced at it; their notes keep
// the line rate.
//
// Latencies (alpha) are typical small-message times through the usual communication
// library (NCCL, RCCL, GCL, XLA), not the wire's latency; they are assumptions of the
// order of magnitude (Calculon uses 10 us for NVLink and 20 us for InfiniBand,
// llm-analysis 8 us), to be replaced by measured alpha-beta values.
var linkPresets = map[string]LinkPreset{
	// NVLink 2 (V100 SXM2): 6 links of 25 GB/s per direction, 300 GB/s total (NVIDIA
	// Tesla V100 datasheet: "NVLink 300 GB/s").
	"nvlink2": {Name: "nvlink2", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(2, 6)}, Note: "V100 NVLink 2: 6 x 25 GB/s = 150 GB/s per direction on the wire (V100 datasheet: 300 GB/s total); NCCL's 6 x 20.0 = 120 GB/s (src/graph/topo.h)"},
	// NVLink 3 (A100): 12 links of 25 GB/s per direction, 600 GB/s total (A100 datasheet).
	"nvlink3": {Name: "nvlink3", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(3, 12)}, Note: "A100 NVLink 3: 12 x 25 GB/s = 300 GB/s per direction on the wire (A100 datasheet: 600 GB/s total); NCCL's 12 x 20.0 = 240 GB/s (src/graph/topo.h)"},
	// NVLink 4 (H100, H200): 18 links, 900 GB/s total (H100 datasheet).
	"nvlink4": {Name: "nvlink4", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(4, 18)}, Note: "H100 NVLink 4: 18 x 25 GB/s = 450 GB/s per direction on the wire (H100 datasheet: 900 GB/s total); NCCL's 18 x 20.6 = 370.8 GB/s (src/graph/topo.h; nccl-tests#212: 370 GB/s)"},
	// NVLink 5 (B200): 18 links, 1.8 TB/s total (HGX B200 datasheet).
	"nvlink5": {Name: "nvlink5", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(5, 18)}, Note: "B200 NVLink 5: 18 x 50 GB/s = 900 GB/s per direction on the wire (HGX B200 datasheet: 1.8 TB/s total); NCCL's 18 x 40.1 = 721.8 GB/s (src/graph/topo.h; nccl#1807)"},
	// NVSwitch joins every GPU of a node to every other at the GPU's full NVLink bandwidth
	// (all-to-all, non-blocking), so any pair, ring or tensor-parallel group inside the
	// node gets it. First generation: DGX-2 (16 V100, 12 NVSwitches; DGX-2 datasheet).
	"nvswitch1": {Name: "nvswitch1", Link: Link{LatencySeconds: 3.5e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(2, 6)}, Note: "NVSwitch gen 1 (DGX-2, 16 x V100): any pair at 150 GB/s per direction on the wire (DGX-2 datasheet: 2.4 TB/s bisection); NCCL's 6 x 20.0 = 120 GB/s (src/graph/topo.h)"},
	// Second generation: DGX A100 / HGX A100 8-GPU (6 NVSwitches; DGX A100 datasheet:
	// "600 GB/s GPU-to-GPU bandwidth").
	"nvswitch2": {Name: "nvswitch2", Link: Link{LatencySeconds: 3.5e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(3, 12)}, Note: "NVSwitch gen 2 (DGX/HGX A100 8-GPU): any pair at 300 GB/s per direction on the wire (DGX A100 datasheet: 600 GB/s GPU-to-GPU); NCCL's 12 x 20.0 = 240 GB/s (src/graph/topo.h)"},
	// Third generation: DGX H100 / HGX H100 and H200 8-GPU (4 NVSwitches; DGX H100
	// datasheet: "900 GB/s GPU-to-GPU bandwidth").
	"nvswitch3": {Name: "nvswitch3", Link: Link{LatencySeconds: 3.5e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(4, 18)}, Note: "NVSwitch gen 3 (DGX/HGX H100, H200 8-GPU): any pair at 450 GB/s per direction on the wire (DGX H100 datasheet: 900 GB/s GPU-to-GPU); NCCL's 18 x 20.6 = 370.8 GB/s (src/graph/topo.h; nccl-tests#212: 370 GB/s)"},
	// Fourth generation (NVLink Switch): HGX B200 8-GPU and GB200 NVL72 (72 GPUs in one
	// NVLink domain; GB200 NVL72 datasheet: 1.8 TB/s GPU-to-GPU, 130 TB/s in all).
	"nvswitch4": {Name: "nvswitch4", Link: Link{LatencySeconds: 3.5e-6, BytesPerSecond: NVLinkCollectiveBytesPerSecond(5, 18)}, Note: "NVLink Switch gen 4 (HGX B200, GB200 NVL72): any pair at 900 GB/s per direction on the wire (GB200 NVL72 datasheet: 1.8 TB/s GPU-to-GPU); NCCL's 18 x 40.1 = 721.8 GB/s (src/graph/topo.h; nccl#1807)"},
	// PCIe 4.0 x16: 16 GT/s x 16 lanes with 128b/130b coding = 31.5 GB/s per direction.
	"pcie4": {Name: "pcie4", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 31.5e9}, Note: "PCIe 4.0 x16: 31.5 GB/s per direction"},
	// PCIe 5.0 x16: twice PCIe 4.0.
	"pcie5": {Name: "pcie5", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 63e9}, Note: "PCIe 5.0 x16: 63 GB/s per direction"},
	// InfiniBand data rates per 4x port (InfiniBand Trade Association roadmap): EDR
	// 100 Gb/s (ConnectX-4/5), HDR 200 Gb/s (ConnectX-6, DGX A100), NDR 400 Gb/s
	// (ConnectX-7, DGX H100), XDR 800 Gb/s (ConnectX-8 SuperNIC, Quantum-X800 switches).
	"ib-edr": {Name: "ib-edr", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 12.5e9}, Note: "InfiniBand EDR: 100 Gb/s = 12.5 GB/s per port (IBTA roadmap; ConnectX-5)"},
	"ib-hdr": {Name: "ib-hdr", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 25e9}, Note: "InfiniBand HDR: 200 Gb/s = 25 GB/s per port (IBTA roadmap; ConnectX-6, DGX A100)"},
	"ib-ndr": {Name: "ib-ndr", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 50e9}, Note: "InfiniBand NDR: 400 Gb/s = 50 GB/s per port (IBTA roadmap; ConnectX-7, DGX H100)"},
	"ib-xdr": {Name: "ib-xdr", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 100e9}, Note: "InfiniBand XDR: 800 Gb/s = 100 GB/s per port (IBTA roadmap; ConnectX-8, Quantum-X800)"},
	// Intel Omni-Path as NCCL drove it on Jean Zay's A100 nodes in 2022 (BigScience's
	// BLOOM cluster: 8 A100 80 GB and "4 OmniPath links" a node, bigscience-workshop/
	// bigscience, train/tr11-176B-ml/README.md): not a line rate but a measured bus
	// bandwidth, because NCCL has no Omni-Path transport of its own and ran its
	// InfiniBand-verbs one over the hfi1 adapters, without GPUDirect RDMA (the log's
	// "NET/IB : Using [0]hfi1_1:1/IB ... [3]hfi1_3:1/IB" and "via NET/IB/1", no GDRDMA).
	// BigScience's all_reduce_bench (experiments/bandwidth/all_reduce_bench.py and
	// all_reduce_bench-a100-n4.txt, 2022-01-28, the BLOOM environment) all-reduced 4.0 GB
	// of fp32 among 4 nodes x 8 GPUs in 1.529 s (median of 160 rank-trials; 1.519 s the
	// fastest): a bus bandwidth of 4.0 GB x 2 x 31/32 / 1.529 s = 5.07 GB/s (40.5 Gb/s; the
	// README: "algo throughput: 15 to 42 Gbps"; "we have an issue with nccl that doesn't
	// fully utilize Intel OPA full bandwidth", 100 Gb/s a link). The whole node's ring
	// got that rate (two channels, through two of the four adapters), so one interface a
	// device at 5.07 GB/s is the most a device's own ring can be given: a lower bound on
	// the cost of what crosses nodes. The latency is InfiniBand's assumption.
	"opa-nccl": {Name: "opa-nccl", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: opaNCCLBusBytesPerSecond}, Note: "Intel Omni-Path under NCCL's IB-verbs transport without GPUDirect RDMA: 5.07 GB/s bus bandwidth, measured (BigScience's all_reduce_bench on 4 Jean Zay A100 nodes, 2022-01-28; line rate 100 Gb/s)"},
	// RDMA over Converged Ethernet (RoCE v2) at the Ethernet rates of IEEE 802.3ba
	// (100GbE), 802.3cd (200GbE) and 802.3bs (400GbE), on ConnectX-6 Dx (100/200 GbE)
	// and ConnectX-7 (400 GbE) NICs. The alpha is a little above InfiniBand's (switch
	// buffering, congestion control), an assumption.
	"roce-100g": {Name: "roce-100g", Link: Link{LatencySeconds: 7e-6, BytesPerSecond: 12.5e9}, Note: "RoCE v2 over 100GbE (IEEE 802.3ba): 12.5 GB/s per port"},
	"roce-200g": {Name: "roce-200g", Link: Link{LatencySeconds: 7e-6, BytesPerSecond: 25e9}, Note: "RoCE v2 over 200GbE (IEEE 802.3cd): 25 GB/s per port"},
	"roce-400g": {Name: "roce-400g", Link: Link{LatencySeconds: 7e-6, BytesPerSecond: 50e9}, Note: "RoCE v2 over 400GbE (IEEE 802.3bs; ConnectX-7): 50 GB/s per port"},
	// Graphcore IPU-Link between neighbouring IPUs in an IPU-M2000 (320 GB/s over all
	// links of a chip; two links of 32 GB/s joining pipeline neighbours).
	"ipu-link": {Name: "ipu-link", Link: Link{LatencySeconds: 2e-6, BytesPerSecond: 64e9}, Note: "Graphcore IPU-Link: 64 GB/s between neighbours"},
	// TPU inter-chip interconnect, one link between torus neighbours: about 50 GB/s per
	// direction on v4 and v5e (v5p links are about twice as fast: 1,200 GB/s per chip
	// bidirectional over six links).
	"tpu-ici": {Name: "tpu-ici", Link: Link{LatencySeconds: 2e-6, BytesPerSecond: 50e9}, Note: "TPU ICI link (v4/v5e): about 50 GB/s per direction"},
	// TPU v5p ICI: 1,200 GB/s per chip bidirectional over six torus links (Cloud TPU docs,
	// "TPU v5p"): 100 GB/s per direction per link.
	"tpu-ici-v5p": {Name: "tpu-ici-v5p", Link: Link{LatencySeconds: 2e-6, BytesPerSecond: 100e9}, Note: "TPU v5p ICI link: 1,200 GB/s per chip over 6 links = 100 GB/s per direction (Cloud TPU v5p docs)"},
	// TPU v6e ICI: 800 GB/s per chip bidirectional over four ports (Cloud TPU docs, "TPU
	// v6e"): 100 GB/s per direction per port.
	"tpu-ici-v6e": {Name: "tpu-ici-v6e", Link: Link{LatencySeconds: 2e-6, BytesPerSecond: 100e9}, Note: "TPU v6e ICI port: 800 GB/s per chip over 4 ports = 100 GB/s per direction (Cloud TPU v6e docs)"},
	// TPU data-center network: 50 Gb/s per v5p chip (Cloud TPU docs, "TPU v5p").
	"tpu-dcn-50g": {Name: "tpu-dcn-50g", Link: Link{LatencySeconds: 10e-6, BytesPerSecond: 6.25e9}, Note: "TPU v5p data-center network: 50 Gb/s = 6.25 GB/s per chip (Cloud TPU v5p docs)"},
	// AMD Infinity Fabric on CDNA 4 (MI355X datasheet): 7 links of 153.6 GB/s
	// bidirectional, one per peer of an 8-GPU platform: 76.8 GB/s per direction.
	// Collectives run on RCCL's rings over all seven links (MeshBytesPerSecond).
	"xgmi4": {Name: "xgmi4", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 76.8e9}, MeshBytesPerSecond: rcclXGMILinkBytesPerSecond, Note: "MI355X Infinity Fabric: 153.6 GB/s per peer bidirectional = 76.8 GB/s per direction (AMD MI355X datasheet), a full mesh: RCCL's rings get 48 GB/s a link (rccl topo.h GFX95X_XGMI_WIDTH), k-1 links for k devices"},
	// Intel Gaudi 3: three 200 GbE RoCE ports per peer inside an 8-card server, and three
	// per card out of it (Intel Gaudi 3 white paper): 600 Gb/s = 75 GB/s per direction.
	"gaudi3-roce": {Name: "gaudi3-roce", Link: Link{LatencySeconds: 7e-6, BytesPerSecond: 75e9}, Note: "Gaudi 3 RoCE: 3 x 200 GbE = 75 GB/s per direction, per peer in a server or per card out of it (Intel Gaudi 3 white paper)"},
	// AWS NeuronLink-v3 between Trainium2 chips: 1 TB/s per chip over the four links of a
	// 2-D torus (AWS Trn2 docs), taken as bidirectional: 125 GB/s per direction per link.
	"neuronlink-v3": {Name: "neuronlink-v3", Link: Link{LatencySeconds: 3e-6, BytesPerSecond: 125e9}, Note: "AWS NeuronLink-v3: 1 TB/s per Trainium2 chip over 4 torus links, taken bidirectional: 125 GB/s per direction (AWS Trn2 docs)"},
	// AWS EFAv3 on trn2.48xlarge: 3.2 Tb/s per instance of 16 chips (AWS Trn2 docs):
	// 200 Gb/s = 25 GB/s per chip.
	"efa-v3": {Name: "efa-v3", Link: Link{LatencySeconds: 15e-6, BytesPerSecond: 25e9}, Note: "AWS EFAv3: 3.2 Tb/s per trn2.48xlarge of 16 chips = 25 GB/s per chip (AWS Trn2 docs)"},
	// AMD Infinity Fabric (xGMI) between two MI300X: 128 GB/s bidirectional per peer, a
	// full mesh of 8 (collectives: MeshBytesPerSecond).
	"xgmi": {Name: "xgmi", Link: Link{LatencySeconds: 5e-6, BytesPerSecond: 64e9}, MeshBytesPerSecond: rcclXGMILinkBytesPerSecond, Note: "MI300X Infinity Fabric: 64 GB/s per direction per peer, a full mesh: RCCL's rings get 48 GB/s a link (rccl topo.h GFX94X_XGMI_WIDTH), k-1 links for k devices"},
}

// LookupDevice returns the preset device of that name (case-insensitive).
func LookupDevice(name string) (DevicePreset, error) {
	d, ok := devicePresets[strings.ToLower(name)]
	if !ok {
		return DevicePreset{}, fmt.Errorf("unknown device %q; known devices: %s", name, strings.Join(DeviceNames(), ", "))
	}
	return d, nil
}

// LookupLink returns the preset link of that name (case-insensitive).
func LookupLink(name string) (LinkPreset, error) {
	l, ok := linkPresets[strings.ToLower(name)]
	if !ok {
		return LinkPreset{}, fmt.Errorf("unknown link %q; known links: %s", name, strings.Join(LinkNames(), ", "))
	}
	return l, nil
}

// DeviceNames lists the device presets, sorted.
func DeviceNames() []string { return sortedKeys(devicePresets) }

// LinkNames lists the link presets, sorted.
func LinkNames() []string { return sortedKeys(linkPresets) }

func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// FillFromPresets completes each device named after a preset (LookupDevice, any case) with
// the preset's figures the device leaves out: flops_per_second, clock_hz, and, when
// memory_bytes is 0, memory_bytes with the preset's usable_fraction. Figures a device
// states are kept. It is how a cluster file may say {"name": "a100-80gb"} for a device.
//
// It then refuses a cluster whose devices' speeds cannot be compared: some devices state
// flops_per_second (or are presets) and others do not, so that SpeedScale would fall back
// to clocks or to 1 and plan a slow device as fast as the first. Errors name the device.
func (c *Cluster) FillFromPresets() error {
	for i := range c.Devices {
		d := &c.Devices[i]
		if d.Name == "" {
			continue
		}
		pr, ok := devicePresets[strings.ToLower(d.Name)]
		if !ok {
			continue
		}
		if d.FLOPSPerSecond == 0 {
			d.FLOPSPerSecond = pr.FLOPSPerSecond
		}
		if d.ClockHz == 0 {
			d.ClockHz = pr.ClockHz
		}
		if d.MemoryBytesPerSecond == 0 {
			d.MemoryBytesPerSecond = pr.Perf.MemoryBytesPerSecond
		}
		if d.MemoryBytes == 0 {
			d.MemoryBytes = pr.MemoryBytes
			if d.UsableFraction == 0 {
				d.UsableFraction = pr.UsableFraction
				d.PresetUsable = pr.UsableFraction != 0
			}
		}
	}
	with, without := -1, -1
	for i, d := range c.Devices {
		if d.FLOPSPerSecond > 0 {
			if with < 0 {
				with = i
			}
		} else if without < 0 {
			without = i
		}
	}
	if with >= 0 && without >= 0 {
		return &model.FieldError{Path: fmt.Sprintf("devices[%d].flops_per_second", without),
			Reason: fmt.Sprintf("is missing, but devices[%d] states one: layer times scale across devices by flops_per_second only when every device states it (or is named after a preset, see pipeplan devices)", with)}
	}
	return nil
}

// MaxStages bounds the devices of a cluster, and so the stage count of a plan (4,096).
// The deepest pipelines in use have tens to hundreds of stages (an IPU-POD256 has 256
// IPUs); more is surely a typo or hostile, and the planner's work grows with layers times
// stages.
const MaxStages = 1 << 12

// FromPreset builds a cluster of n preset devices joined by the preset's usual link.
func FromPreset(device string, n int) (*Cluster, error) {
	d, err := LookupDevice(device)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > MaxStages {
		return nil, &model.FieldError{Path: "stages", Reason: fmt.Sprintf("must be between 1 and %d, got %d", MaxStages, n)}
	}
	l, err := LookupLink(d.Link)
	if err != nil {
		return nil, err
	}
	dev := d.Device
	dev.MemoryBytesPerSecond = d.Perf.MemoryBytesPerSecond
	dev.PresetUsable = dev.UsableFraction != 0
	c := Homogeneous(dev, n, l.Link, nil)
	c.Name = fmt.Sprintf("%d x %s", n, d.Name)
	return c, nil
}
