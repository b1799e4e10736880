package request

import "encoding/json"

// DocumentName returns the top-level "name" of a document that is a JSON object, read
// without decoding the rest: "" when it has none, when the name is not a string, or when
// the document is not a JSON object. A front end that reads a model file uses it to tell
// a nameless profile (Graphcore's, PipeDream's), which it names after the file.
func DocumentName(doc []byte) string {
	pos := skipSpace(doc, 0)
	if pos >= len(doc) || doc[pos] != '{' {
		return ""
	}
	for pos = skipSpace(doc, pos+1); pos < len(doc) && doc[pos] == '"'; {
		end := stringEnd(doc, pos)
		if end-1 <= pos || doc[end-1] != '"' {
			return "" // the key never ends
		}
		key := doc[pos+1 : end-1]
		if pos = skipSpace(doc, end); pos >= len(doc) || doc[pos] != ':' {
			return ""
		}
		start := skipSpace(doc, pos+1)
		if start >= len(doc) {
			return ""
		}
		end = skipValue(doc, start)
		if string(key) == "name" {
			var name string
			if json.Unmarshal(doc[start:end], &name) != nil {
				return ""
			}
			return name
		}
		if pos = skipSpace(doc, end); pos < len(doc) && doc[pos] == ',' {
			pos = skipSpace(doc, pos+1)
		}
	}
	return ""
}
