package export

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// pyDecode reads a double-quoted Python 3 string literal as Python's tokenizer does, and
// returns the bytes os.fsencode would give its value (a lone surrogate U+DC80..U+DCFF is
// the byte it escapes). It is the oracle for pyStr, written from the language reference
// (Lexical analysis, "String and Bytes literals"), and refuses anything pyStr must not
// write: a raw line break, a raw control character, an unknown escape.
func pyDecode(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c == '\n' || c == '\r' || c < ' ' || c == 0x7f:
			return "", false // ends the literal, or is not written raw
		case c != '\\':
			r, size := utf8.DecodeRuneInString(body[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false // Python reads source as UTF-8
			}
			b.WriteString(body[i : i+size])
			i += size
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		e := body[i+1]
		i += 2
		simple := map[byte]string{'\\': `\`, '"': `"`, '\'': `'`, 'n': "\n", 'r': "\r", 't': "\t",
			'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v"}
		if s, ok := simple[e]; ok {
			b.WriteString(s)
			continue
		}
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		if digits == 0 || i+digits > len(body) {
			return "", false
		}
		v, err := strconv.ParseUint(body[i:i+digits], 16, 32)
		if err != nil {
			return "", false
		}
		i += digits
		switch {
		case v >= 0xdc80 && v <= 0xdcff:
			b.WriteByte(byte(v - 0xdc00)) // surrogateescape
		case v >= 0xd800 && v <= 0xdfff, v > utf8.MaxRune:
			return "", false
		default:
			b.WriteRune(rune(v))
		}
	}
	return b.String(), true
}

// commentDecode undoes commentText's escapes.
func commentDecode(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		e := s[i+1]
		i += 2
		switch e {
		case '\\':
			b.WriteByte('\\')
			continue
		case 'n':
			b.WriteByte('\n')
			continue
		case 'r':
			b.WriteByte('\r')
			continue
		case 't':
			b.WriteByte('\t')
			continue
		}
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		if digits == 0 || i+digits > len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i:i+digits], 16, 32)
		if err != nil {
			return "", false
		}
		i += digits
		if e == 'x' {
			b.WriteByte(byte(v)) // a control character, or a byte that is not UTF-8
		} else {
			b.WriteRune(rune(v))
		}
	}
	return b.String(), true
}

var escapeSeeds = []string{
	"", "plain", "model.layers.8", "x\ntouch pwned\n#", `x"y`, `x\`, `"""`, "a\x00b", "\xff\xfe",
	"\xed\xa0\x80", "x\u2028y\u2029", "\u202eevil", "tab\there", "\U0001F600", "\U000E0001",
	"é\u0301", "\x7f", "\u0085", "\ufffd", "\\n", `\x41`,
}

func TestEscapeTable(t *testing.T) {
	tests := []struct{ in, py, comment string }{
		{"plain", `"plain"`, "plain"},
		{"x\ny", `"x\ny"`, `x\ny`},
		{`a"b\c`, `"a\"b\\c"`, `a"b\\c`},
		{"a\x00b\x7f", `"a\x00b\x7f"`, `a\x00b\x7f`},
		{"\xff", `"\udcff"`, `\xff`},
		{"x\u2028\u202e", `"x\u2028\u202e"`, `x\u2028\u202e`},
		{"\U000E0001", `"\U000e0001"`, `\U000e0001`},
		{"héllo 😀", `"héllo 😀"`, "héllo 😀"},
		{"a\u00a0b", `"a\u00a0b"`, `a\u00a0b`},
	}
	for _, tt := range tests {
		if got := pyStr(tt.in); got != tt.py {
			t.Errorf("pyStr(%q) = %s, want %s", tt.in, got, tt.py)
		}
		if got := commentText(tt.in); got != tt.comment {
			t.Errorf("commentText(%q) = %s, want %s", tt.in, got, tt.comment)
		}
	}
}

// FuzzPyStr checks that pyStr's literal reads back, by the language's rules, as the
// bytes it was given, and holds nothing raw that could end it.
func FuzzPyStr(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit := pyStr(s)
		got, ok := pyDecode(lit)
		if !ok {
			t.Fatalf("pyStr(%q) = %s, which is not a plain Python string literal", s, lit)
		}
		if got != s {
			t.Fatalf("pyStr(%q) = %s reads back as %q", s, lit, got)
		}
	})
}

// FuzzCommentText checks that a comment's text holds no character that could end the
// comment or hide what it says, and that it reads back as what it was given.
func FuzzCommentText(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := commentText(s)
		if !utf8.ValidString(c) {
			t.Fatalf("commentText(%q) = %q is not UTF-8", s, c)
		}
		for _, r := range c {
			if !commentSafe(r) {
				t.Fatalf("commentText(%q) = %q holds %U", s, c, r)
			}
		}
		if got, ok := commentDecode(c); !ok || got != s {
			t.Fatalf("commentText(%q) = %q reads back as %q (%v)", s, c, got, ok)
		}
	})
}
