package request

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// requestDoc is the request format's documentation, which these tests keep honest.
const requestDoc = "../../docs/request.md"

// jsonBlocks returns the ```json blocks of the section of markdown under the heading
// line heading, up to the next heading of the same or a higher level.
func jsonBlocks(t *testing.T, markdown []byte, heading string) []string {
	t.Helper()
	level := strings.Index(heading, " ")
	var blocks []string
	var block *strings.Builder
	in := false
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block != nil && line == "```":
			blocks = append(blocks, block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case line == heading:
			in = true
		case in && strings.HasPrefix(line, "#") && strings.Index(line, " ") <= level:
			in = false
		case in && line == "```json":
			block = new(strings.Builder)
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("%s: no ```json block under %q", requestDoc, heading)
	}
	return blocks
}

func readDoc(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(requestDoc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDocExample runs the documented example request and checks the documented
// (abridged) result against what Run returns: every value the documentation shows must
// be the result's.
func TestDocExample(t *testing.T) {
	doc := readDoc(t)
	in := jsonBlocks(t, doc, "## Example request")[0]
	r := decode(t, in)
	res := run(t, r)
	if !res.Feasible {
		t.Fatalf("the documented example has no plan: %+v", res.Diagnostics)
	}
	// The example spells out the golden request's defaults: the same request.
	golden, err := os.ReadFile("testdata/gpt2-4xa100.json")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := ID(decode(t, string(golden))); id != res.ID {
		t.Errorf("the documented example's id %s is not the golden request's %s", res.ID, id)
	}

	var shown, got any
	if err := json.Unmarshal([]byte(jsonBlocks(t, doc, "## Example result")[0]), &shown); err != nil {
		t.Fatalf("the documented result is not JSON: %v", err)
	}
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, diff := range abridges(shown, got, "") {
		t.Errorf("docs/request.md's example result: %s", diff)
	}
}

// abridges lists where shown is not an abridgement of got: every key of a shown object
// must be in got's with an abridging value, a shown array must be a prefix of got's, and
// other values must be equal.
func abridges(shown, got any, path string) []string {
	switch s := shown.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an object, the result has %v", path, got)}
		}
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			v := s[k]
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in the result", path, k))
				continue
			}
			diffs = append(diffs, abridges(v, gv, path+"."+k)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(s) {
			return []string{fmt.Sprintf("%s: %d elements, the result has %v", path, len(s), got)}
		}
		var diffs []string
		for i := range s {
			diffs = append(diffs, abridges(s[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return diffs
	}
	if !reflect.DeepEqual(shown, got) {
		return []string{fmt.Sprintf("%s: %v, the result has %v", path, shown, got)}
	}
	return nil
}

// TestDocRequests: every request the documentation shows decodes, normalizes and plans.
func TestDocRequests(t *testing.T) {
	for i, in := range jsonBlocks(t, readDoc(t), "## More requests") {
		r, err := Decode([]byte(in))
		if err != nil {
			t.Errorf("request %d: %v", i, err)
			continue
		}
		if res, err := Run(t.Context(), r); err != nil || !res.Feasible {
			t.Errorf("request %d: %v, %+v", i, err, res)
		}
	}
}

// TestDocDefaults: the defaults the documentation lists are Normalize's doc comment's,
// field by field.
func TestDocDefaults(t *testing.T) {
	doc := string(readDoc(t))
	for _, field := range []string{"version", "training.mode", "training.optimizer", "training.precision",
		"training.recompute", "cluster.count", "cluster.link", "parallelism.data", "parallelism.pipeline",
		"schedule.name", "schedule.microbatches", "schedule.microbatch_size", "schedule.weight_grad_fraction",
		"model.architecture", "objective", "memory_proportion"} {
		if !strings.Contains(doc, "`"+field+"`:") {
			t.Errorf("docs/request.md lists no default for %s", field)
		}
	}
}

// TestDocCodes: every diagnostic code is documented.
func TestDocCodes(t *testing.T) {
	doc := string(readDoc(t))
	for _, code := range []string{CodeStageOverMemory, CodeScheduleAdvice, CodeIdleDevices, CodeTimesScaled,
		CodeTimesNotScaled, CodeMicrobatchSizeUnknown, CodeStateAdded, CodeStateRemoved, CodeDataLinkAssumed,
		CodeGradBytesAssumed, CodeOptimizerTimeUnknown, CodeBeyondScaleUp, CodeGraphPartitionFallback, CodeGraphcoreMemoryRule,
		"too_few_layers", "too_few_cuts", "layer_too_large", "state_too_large", "no_split_fits"} {
		if !strings.Contains(doc, "| `"+code+"` |") {
			t.Errorf("docs/request.md does not document the code %s", code)
		}
	}
	if !strings.Contains(doc, PlannerVersion) {
		t.Errorf("docs/request.md does not show the planner version %s", PlannerVersion)
	}
}
