package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ModelFromFile turns a model file a person picked (a native or Graphcore model, a
// PipeDream graph.txt, a HuggingFace config.json) into the request's model: an
// architecture for a config.json (it has "model_type"), else a document (JSON, compacted;
// other text as a JSON string). Files over limit bytes are refused. The page and the
// planner worker read files with it, so that both see a file the same way.
func ModelFromFile(data []byte, limit int) (ModelSpec, error) {
	if len(data) == 0 {
		return ModelSpec{}, errors.New("the file is empty")
	}
	if len(data) > limit {
		return ModelSpec{}, fmt.Errorf("the file is larger than %d MiB", limit>>20)
	}
	trim := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))) // a byte-order mark, as editors on Windows write
	if bytes.HasPrefix(trim, []byte("{")) {
		// model_type is searched in the text first: a profile of a million layers is not
		// decoded twice.
		if bytes.Contains(trim, []byte(`"model_type"`)) {
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(trim, &probe); err != nil {
				return ModelSpec{}, fmt.Errorf("the file looks like JSON but does not parse: %v", err)
			}
			if _, ok := probe["model_type"]; ok {
				return ModelSpec{Architecture: &Architecture{Config: json.RawMessage(strings.Clone(string(trim)))}}, nil
			}
		}
		var buf bytes.Buffer
		buf.Grow(len(trim))
		if err := json.Compact(&buf, trim); err != nil {
			return ModelSpec{}, fmt.Errorf("the file looks like JSON but does not parse: %v", err)
		}
		return ModelSpec{Document: json.RawMessage(buf.Bytes())}, nil
	}
	text, _ := json.Marshal(string(data))
	return ModelSpec{Document: text}, nil
}
