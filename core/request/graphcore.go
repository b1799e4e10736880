package request

import (
	"fmt"

	"pipeplan/core/load"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// toolMemory reports whether the stages are planned with Graphcore's auto-pipeline tool's
// memory rule: one microbatch's activations on every stage, whatever the schedule keeps in
// flight (plan.ScheduleOptions.OneMicrobatch). It holds for training a Graphcore profile,
// so that the settings docs/formats.md names reproduce the tool's partitions, which count
// one microbatch (its curActivation); a profile in pipeplan's native JSON is planned with
// the schedule's stash.
func (p *prepared) toolMemory() bool { return p.format == load.Graphcore && p.train() }

// toolMemoryNote says so in a note where the rule changes what a stage holds: where the
// profile's layers keep activations, or recomputation stashes stage inputs.
func (p *prepared) toolMemoryNote(c schedule.Config) {
	if !p.toolMemory() {
		return
	}
	keeps := p.recomputeStages
	for _, l := range p.model.Layers {
		keeps = keeps || l.ActivationBytes > 0
	}
	if !keeps {
		return
	}
	p.note(wire.Diagnostic{Code: wire.CodeGraphcoreMemoryRule, Severity: wire.Note, Field: "schedule.name",
		Message:    fmt.Sprintf("the Graphcore profile is split as Graphcore's auto-pipeline tool splits it: each stage's memory holds one microbatch's activations (curActivation), not the microbatches %s keeps in flight; the simulated step's peak memory counts those", c),
		Suggestion: "to split with the schedule's stash counted, give the profile in pipeplan's native JSON (docs/formats.md)"})
}
