package request

import (
	"bytes"
	"encoding/json"

	"pipeplan/core/internal/jsonscan"
)

// DocumentName returns the top-level "name" of a document that is a JSON object, read
// without decoding the rest: "" when it has none, when the name is not a string, or when
// the document is not a JSON object. A front end that reads a model file uses it to tell
// a nameless profile (Graphcore's, PipeDream's), which it names after the file.
func DocumentName(doc []byte) string {
	var name string
	jsonscan.Members(doc, func(key []byte, value int) bool {
		if bytes.IndexByte(key, '\\') >= 0 { // "n\u0061me" is "name" too
			var k string
			if json.Unmarshal(key, &k) != nil || k != "name" {
				return true
			}
		} else if string(key) != `"name"` {
			return true
		}
		if json.Unmarshal(doc[value:jsonscan.ValueEnd(doc, value)], &name) != nil {
			name = ""
		}
		return false
	})
	return name
}
