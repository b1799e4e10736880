package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"pipeplan/core/internal/jsonscan"
)

// token is one JSON token: a bracket or brace, a string, a number or a literal.
type token struct {
	// kind is '{', '}', '[' or ']'; '"' for a string, '0' for a number, 't', 'f' or 'n'
	// for true, false and null.
	kind byte
	// text is a string's value or a number's literal.
	text string
}

// lexer splits JSON text into tokens the way json.Decoder.Token does (commas and colons
// are checked and consumed, not returned), checking the grammar as it goes. Unlike
// Decoder.Token it allocates only for the text of strings and numbers (object keys are
// interned), which makes a long array of small objects several times cheaper to read.
// FuzzLexer checks it against encoding/json.
type lexer struct {
	data  []byte
	pos   int
	open  []byte // '{' or '[' for each container the lexer is in
	state lexState
	keys  [256]string // object keys seen, to share their strings (intern)
	texts [512]string // recent number literals and plain strings, to share theirs (intern)
}

// lexState says what the lexer expects next.
type lexState byte

const (
	wantValue        lexState = iota // a value: at the top, after ':', after ',' in an array
	wantValueOrClose                 // a value or ']', after '['
	wantKeyOrClose                   // a key or '}', after '{'
	wantKey                          // a key, after ',' in an object
	wantColon                        // ':' and a value, after a key
	wantCommaOrClose                 // ',' or the closing bracket, after a value
	wantNothing                      // the top-level value is complete
)

// maxDepth is encoding/json's bound on nesting, kept so that both refuse the same input.
const maxDepth = 10000

// errSyntax marks a syntax error the lexer found at l.pos; reader.syntaxError describes
// it as encoding/json does.
var errSyntax = errors.New("JSON syntax error")

func newLexer(data []byte) *lexer {
	return &lexer{data: data}
}

func (l *lexer) skipSpace() { l.pos = jsonscan.Space(l.data, l.pos) }

// More reports whether there is another element in the current array or object (or,
// after the top-level value, more data).
func (l *lexer) More() bool {
	l.skipSpace()
	return l.pos < len(l.data) && l.data[l.pos] != ']' && l.data[l.pos] != '}'
}

// Trailing reports whether anything but white space follows what the lexer has read.
func (l *lexer) Trailing() bool {
	l.skipSpace()
	return l.pos < len(l.data)
}

// InputOffset is the offset of the byte after the last token read.
func (l *lexer) InputOffset() int64 { return int64(l.pos) }

// Token returns the next token.
func (l *lexer) Token() (token, error) {
	l.skipSpace()
	if l.pos == len(l.data) {
		return token{}, errSyntax // the value is not complete (or there was none)
	}
	c := l.data[l.pos]
	switch l.state {
	case wantNothing:
		return token{}, errSyntax
	case wantCommaOrClose:
		switch {
		case c == ',':
			l.pos++
			l.state = wantValue
			if l.open[len(l.open)-1] == '{' {
				l.state = wantKey
			}
			return l.Token()
		case c == ']' && l.open[len(l.open)-1] == '[', c == '}' && l.open[len(l.open)-1] == '{':
			return l.close(c), nil
		}
		return token{}, errSyntax
	case wantValueOrClose:
		if c == ']' {
			return l.close(c), nil
		}
	case wantKeyOrClose:
		if c == '}' {
			return l.close(c), nil
		}
		return l.key()
	case wantKey:
		return l.key()
	case wantColon:
		if c != ':' {
			return token{}, errSyntax
		}
		l.pos++
		l.state = wantValue
		return l.Token()
	}
	return l.value(c)
}

// close reads the closing bracket c.
func (l *lexer) close(c byte) token {
	l.pos++
	l.open = l.open[:len(l.open)-1]
	l.valueDone()
	return token{kind: c}
}

// valueDone moves past a complete value.
func (l *lexer) valueDone() {
	l.state = wantCommaOrClose
	if len(l.open) == 0 {
		l.state = wantNothing
	}
}

// intern returns b as a string from its hash's slot of table, putting it there first if
// the slot holds another: a profile repeats its keys, sizes and kinds layer after layer,
// and a string per token was most of a profile's allocations. The tables are fixed (a
// map that grew cost more than it saved on small files).
func intern(table []string, b []byte) string {
	h := uint32(2166136261) // FNV-1a: texts are short, and maphash has no fast path under WebAssembly
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &table[h%uint32(len(table))]
	if *slot != string(b) { // no allocation for a comparison
		*slot = string(b)
	}
	return *slot
}

// key reads an object key.
func (l *lexer) key() (token, error) {
	if l.data[l.pos] != '"' {
		return token{}, errSyntax
	}
	s, err := l.str(l.keys[:])
	if err != nil {
		return token{}, err
	}
	l.state = wantColon
	return token{kind: '"', text: s}, nil
}

// value reads a value starting with c.
func (l *lexer) value(c byte) (token, error) {
	switch {
	case c == '{' || c == '[':
		if len(l.open) == maxDepth {
			return token{}, errSyntax
		}
		l.pos++
		l.open = append(l.open, c)
		l.state = wantValueOrClose
		if c == '{' {
			l.state = wantKeyOrClose
		}
		return token{kind: c}, nil
	case c == '"':
		s, err := l.str(l.texts[:]) // kinds, tensor and shared item names repeat
		if err != nil {
			return token{}, err
		}
		l.valueDone()
		return token{kind: '"', text: s}, nil
	case c == '-' || c >= '0' && c <= '9':
		start := l.pos
		if !l.number() {
			return token{}, errSyntax
		}
		l.valueDone()
		return token{kind: '0', text: intern(l.texts[:], l.data[start:l.pos])}, nil
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if c == lit[0] {
			for i := range len(lit) {
				if l.pos == len(l.data) || l.data[l.pos] != lit[i] {
					return token{}, errSyntax
				}
				l.pos++
			}
			l.valueDone()
			return token{kind: c}, nil
		}
	}
	return token{}, errSyntax
}

// str reads the string starting at the quote at l.pos and returns its value: a plain one
// interned in table, any other decoded by encoding/json, so that both agree on every
// escape and on invalid UTF-8 (replaced by U+FFFD).
func (l *lexer) str(table []string) (string, error) {
	start := l.pos
	plain, err := l.scanStr()
	switch {
	case err != nil:
		return "", err
	case plain:
		return intern(table, l.data[start+1:l.pos-1]), nil
	}
	var s string
	if err := json.Unmarshal(l.data[start:l.pos], &s); err != nil {
		l.pos = start
		return "", errSyntax
	}
	return s, nil
}

// scanStr moves past the string starting at the quote at l.pos, checking its syntax, and
// reports whether its body is plain: ASCII without escapes, its own value.
func (l *lexer) scanStr() (plain bool, err error) {
	plain = true
	for l.pos++; l.pos < len(l.data); l.pos++ {
		switch c := l.data[l.pos]; {
		case c == '"':
			l.pos++
			return plain, nil
		case c < 0x20:
			return false, errSyntax
		case c == '\\':
			plain = false
			l.pos++
			if l.pos == len(l.data) {
				return false, errSyntax
			}
			switch l.data[l.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					l.pos++
					if l.pos == len(l.data) || !isHex(l.data[l.pos]) {
						return false, errSyntax
					}
				}
			default:
				return false, errSyntax
			}
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return false, errSyntax
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// number reads a number literal: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (l *lexer) number() bool {
	end, ok := numberEnd(l.data, l.pos)
	l.pos = end
	return ok
}

// numberEnd scans the number literal at data[pos] and returns where it ends, and whether
// it is one.
func numberEnd(data []byte, pos int) (int, bool) {
	digits := func() int {
		start := pos
		for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
			pos++
		}
		return pos - start
	}
	if data[pos] == '-' {
		pos++
	}
	if pos < len(data) && data[pos] == '0' {
		pos++
	} else if digits() == 0 {
		return pos, false
	}
	if pos < len(data) && data[pos] == '.' {
		pos++
		if digits() == 0 {
			return pos, false
		}
	}
	if pos < len(data) && (data[pos] == 'e' || data[pos] == 'E') {
		pos++
		if pos < len(data) && (data[pos] == '+' || data[pos] == '-') {
			pos++
		}
		if digits() == 0 {
			return pos, false
		}
	}
	return pos, true
}

// String describes a token for tests.
func (t token) String() string {
	switch t.kind {
	case '"':
		return fmt.Sprintf("%q", t.text)
	case '0':
		return t.text
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return string(t.kind)
}
