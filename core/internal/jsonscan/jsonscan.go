// Package jsonscan finds where JSON values end in a document's bytes without decoding
// them: the loader counts a profile's layers and looks for a format's top-level keys
// with it, and the canonical encoding of a request lists an object's members with it.
// Skipping is a byte loop over strings and brackets, several times faster than
// encoding/json's scanner; it checks no syntax, and on malformed input it stays within the
// data (a string or bracket that never closes ends at the end of the data).
package jsonscan

// Space returns the position of the first byte at or after pos that is not JSON white
// space.
func Space(data []byte, pos int) int {
	for pos < len(data) && (data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\r' || data[pos] == '\n') {
		pos++
	}
	return pos
}

// StringEnd returns the position after the string whose opening quote is at data[pos], or
// len(data) when it never closes.
func StringEnd(data []byte, pos int) int {
	for i := pos + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(data)
}

// ValueEnd returns the position after the value that starts at data[pos] (pos <
// len(data)): a string, an object or array with everything in it, or a number or literal
// up to the next delimiter.
func ValueEnd(data []byte, pos int) int {
	switch data[pos] {
	case '"':
		return StringEnd(data, pos)
	case '{', '[':
		depth := 0
		for i := pos; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = StringEnd(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(data)
	default:
		end := pos
		for end < len(data) && !isDelimiter(data[end]) {
			end++
		}
		return end
	}
}

// isDelimiter reports whether c ends a number or a literal: a comma, a closing bracket or
// white space.
func isDelimiter(c byte) bool {
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// Members calls f with each member of the object at the start of data (after white
// space): its key as quoted in the data, and where its value starts. It stops when f
// returns false, and at the first thing that is not a member.
func Members(data []byte, f func(key []byte, value int) bool) {
	pos := Space(data, 0)
	if pos == len(data) || data[pos] != '{' {
		return
	}
	for pos = Space(data, pos+1); pos < len(data) && data[pos] == '"'; {
		end := StringEnd(data, pos)
		colon := Space(data, end)
		if colon == len(data) || data[colon] != ':' {
			return // also a key that never closes
		}
		value := Space(data, colon+1)
		if value == len(data) || !f(data[pos:end], value) {
			return
		}
		if pos = Space(data, ValueEnd(data, value)); pos < len(data) && data[pos] == ',' {
			pos = Space(data, pos+1)
		}
	}
}
