package request

import "pipeplan/core/cluster"

// trainMetricSyncSeconds is the per-step synchronisation of the training loop's metrics
// (training.train_metrics) across ranks devices, with the device idle: 0 without
// metrics, outside training or on one device. Composer's Trainer (composer/trainer/
// trainer.py, v0.17.2) computes its training metrics after every batch
// (_compute_and_log_metrics, after the loss's all-reduce and .item() have waited for the
// step to end, and inside the next batch's timed wall clock, as its comment says), and a
// torchmetrics metric's compute gathers each of its states from every rank; Composer's
// LanguageCrossEntropy and LanguagePerplexity hold two scalar states each (sum_loss,
// total_items). Each state costs metricStateSyncSeconds over the ranks, on nodes of the
// cluster's devices_per_node (one node without a topology).
func (p *prepared) trainMetricSyncSeconds(ranks int) float64 {
	m := p.req.Training.TrainMetrics
	if m <= 0 || ranks <= 1 || !p.train() {
		return 0
	}
	nodes := 1
	if p.topo != nil && p.topo.DevicesPerNode > 0 {
		nodes = (ranks + p.topo.DevicesPerNode - 1) / p.topo.DevicesPerNode
	}
	return float64(2*m) * metricStateSyncSeconds(ranks, nodes, p.framework.ScaleHost(p.target.Perf.HostScale()).HostKernelSeconds)
}

// metricStateSyncSeconds is the time to gather one scalar metric state from ranks
// devices on nodes nodes, as torchmetrics' gather_all_tensors does it
// (src/torchmetrics/utilities/distributed.py at v1.0.3, the release Composer 0.17
// allows, torchmetrics<1.1): torch.distributed.barrier (NCCL's all-reduce of one
// element, then the host waits for it: cluster.SmallAllReduceSeconds), then
// _simple_gather_all_tensors, a torch.zeros_like for each rank from Python and
// torch.distributed.all_gather into that list (NCCL's ring all-gather of a few bytes:
// cluster.SmallAllGatherSeconds; PyTorch's ProcessGroupNCCL::allgather gathers into one
// flat buffer and copies it out to each rank's tensor, one copy_ each), and Metric._sync_dist's
// torch.stack of the list and the sum: 2 x ranks + 2 operators of the framework's host
// time each (hostOp: cluster.Framework.HostKernelSeconds scaled to the device's host,
// cluster.Perf.HostScale, as package analytic scales it; eager PyTorch's per-operator
// cost), none of which the idle device hides.
func metricStateSyncSeconds(ranks, nodes int, hostOp float64) float64 {
	if ranks <= 1 {
		return 0
	}
	return cluster.SmallAllReduceSeconds(ranks, nodes) + cluster.SmallAllGatherSeconds(ranks, nodes) + float64(2*ranks+2)*hostOp
}
