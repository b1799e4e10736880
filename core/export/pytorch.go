package export

import (
	"fmt"
	"strings"

	"pipeplan/core/schedule"
)

// torchSchedules maps pipeplan's schedules to torch.distributed.pipelining's classes.
var torchSchedules = map[schedule.Kind]string{
	schedule.GPipe:       "ScheduleGPipe",
	schedule.OneFOneB:    "Schedule1F1B",
	schedule.Interleaved: "ScheduleInterleaved1F1B",
	schedule.ZBH1:        "ScheduleInterleavedZeroBubble",
	schedule.Inference:   "ScheduleGPipe",
}

// pytorch writes torch.distributed.pipelining's split_spec (a split point at the
// beginning of each stage's first module), the stages each rank builds and the schedule
// class (PyTorch 2.4 and later).
func pytorch(j *job) error {
	in := j.in
	mods, fromArch := in.moduleNames()
	parts := in.partModules()
	if !fromArch {
		j.note(NoteModuleNames, "the layer names are used as module paths (as pipeplan_profile.py writes them); for another profile, replace them with the paths of the modules that start each stage")
	}
	switch j.sched.Kind {
	case schedule.IPU, schedule.Overlap:
		j.runSchedule(schedule.Config{Kind: schedule.OneFOneB}, fmt.Sprintf("torch.distributed.pipelining has no %s schedule", j.sched.Kind))
	case schedule.ZBH1:
		j.approximate("torch's ScheduleInterleavedZeroBubble runs the zero-bubble paper's ZB1P schedule, an automatically scheduled cousin of ZB-H1 with the same memory")
	}
	run := j.ranSchedule()
	if j.tiedAcross() {
		j.note(NoteTied, "the head reuses the embedding matrix, and they are on different stages: each stage holds its copy, so their gradients must be summed each step")
	}
	class := torchSchedules[run.Kind]
	multi := run.Kind == schedule.Interleaved || run.Kind == schedule.ZBH1
	b := j.split()
	p := in.devices()

	var w strings.Builder
	header(&w, "#", j, "PyTorch torch.distributed.pipelining (PyTorch 2.4 or later)")
	fmt.Fprintf(&w, "import torch\nfrom torch.distributed.pipelining import SplitPoint, pipeline, %s\n\n", class)
	fmt.Fprintf(&w, "NUM_RANKS = %d  # pipeline ranks (devices)\nNUM_STAGES = %d\nN_MICROBATCHES = %d\nMICROBATCH_SIZE = %d  # samples per microbatch\n\n",
		p, len(b)-1, run.Microbatches, orOne(in.MicrobatchSize))
	w.WriteString("# A split point at the beginning of the first module of every stage after the first.\nSPLIT_SPEC = {\n")
	for i, s := range stagesOf(b) {
		if i == 0 {
			continue
		}
		fmt.Fprintf(&w, "    %q: SplitPoint.BEGINNING,  # stage %d: %s\n", mods[s[0]], i, layerSpan(in.LayerNames, s))
	}
	w.WriteString("}\n\n")
	w.WriteString("# Each stage's modules, for splitting by hand (PipelineStage on a model holding only these).\n")
	if fromArch && hasSublayers(in.LayerNames) {
		w.WriteString("# A stage that starts or ends inside a block needs that block's forward split by hand.\n")
	}
	w.WriteString("STAGE_MODULES = [\n")
	for _, s := range stagesOf(b) {
		w.WriteString("    [")
		for l := s[0]; l <= s[1]; l++ {
			for k, m := range parts[l] {
				if l > s[0] || k > 0 {
					w.WriteString(", ")
				}
				fmt.Fprintf(&w, "%q", m)
			}
		}
		w.WriteString("],\n")
	}
	w.WriteString("]\n\n")
	if multi {
		fmt.Fprintf(&w, "\ndef stage_indices(rank):\n    \"\"\"The stages a rank runs: rank, rank + NUM_RANKS, ... (looped, as %s expects).\"\"\"\n    return list(range(rank, NUM_STAGES, NUM_RANKS))\n\n", class)
	} else {
		w.WriteString("\ndef stage_indices(rank):\n    \"\"\"The stage a rank runs: one per rank.\"\"\"\n    return [rank]\n\n")
	}
	param, lossArg := ", loss_fn=None", ", loss_fn=loss_fn"
	lossDoc := "loss_fn(output, target) is the training loss"
	if run.Kind == schedule.Inference {
		param, lossArg = "", ""
		lossDoc = "there is no loss_fn: the schedule runs forward passes only (inference)"
	}
	fmt.Fprintf(&w, `
def build(model, example_microbatch, rank, device, group=None%s):
    """Splits model as planned and returns the schedule that runs this rank's stages.

    example_microbatch is one microbatch of inputs (a tuple of model(*args) arguments);
    %s. Then every step: schedule.step(batch) on the first rank,
    schedule.step(target=target, losses=losses) on the last, schedule.step() elsewhere.
    """
    if not isinstance(example_microbatch, tuple):
        example_microbatch = (example_microbatch,)
    pipe = pipeline(model, mb_args=example_microbatch, split_spec=SPLIT_SPEC)
    if pipe.num_stages != NUM_STAGES:
        raise ValueError("the split gave %%d stages, the plan has %%d" %% (pipe.num_stages, NUM_STAGES))
`, param, lossDoc)
	if multi {
		fmt.Fprintf(&w, "    stages = [pipe.build_stage(i, device, group) for i in stage_indices(rank)]\n    return %s(stages, n_microbatches=N_MICROBATCHES%s)\n", class, lossArg)
	} else {
		fmt.Fprintf(&w, "    stage = pipe.build_stage(rank, device, group)\n    return %s(stage, n_microbatches=N_MICROBATCHES%s)\n", class, lossArg)
	}
	j.ex.Filename, j.ex.Language, j.ex.Text = "pipeplan_pytorch.py", "python", w.String()
	return nil
}

// layerSpan writes a stage's layers "first .. last".
func layerSpan(names []string, s [2]int) string {
	if s[0] == s[1] {
		return names[s[0]]
	}
	return names[s[0]] + " .. " + names[s[1]]
}

// header writes the comment block every snippet starts with: what was planned, what is
// expressed, and the notes.
func header(w *strings.Builder, c string, j *job, what string) {
	in := j.in
	name := in.Model
	if name == "" {
		name = "model"
	}
	fmt.Fprintf(w, "%s pipeplan export (version %d): %s\n", c, Version, what)
	fmt.Fprintf(w, "%s model %s: %d layers; %d pipeline devices, data parallel %d, tensor parallel %d\n",
		c, name, len(in.LayerNames), in.devices(), orOne(in.Data), orOne(in.Tensor))
	fmt.Fprintf(w, "%s planned: %s, %d microbatches of %d; %s\n", c, j.sched, j.sched.Microbatches, orOne(in.MicrobatchSize), costLine(j.ex.Planned))
	j.settle()
	if !j.ex.Exact {
		fmt.Fprintf(w, "%s NOT EXACT: this runs %s, split %v; %s\n", c, j.ranSchedule(), j.split(), costLine(j.ex.Expressed))
	}
	for _, n := range j.ex.Notes {
		for i, line := range wrap(n.Message, 88) {
			lead := "note: "
			if i > 0 {
				lead = "      "
			}
			fmt.Fprintf(w, "%s %s%s\n", c, lead, line)
		}
	}
	w.WriteString("\n")
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
