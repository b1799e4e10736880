package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// decoderTokens returns what json.Decoder.Token gives for the first JSON value in data, in
// the lexer's terms, and whether it met an error first.
func decoderTokens(data []byte) (toks []token, failed bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return toks, true
		}
		var tok token
		switch t := t.(type) {
		case json.Delim:
			tok.kind = byte(t)
			if t == '{' || t == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			tok = token{kind: '"', text: t}
		case json.Number:
			tok = token{kind: '0', text: string(t)}
		case bool:
			tok.kind = 'f'
			if t {
				tok.kind = 't'
			}
		case nil:
			tok.kind = 'n'
		}
		toks = append(toks, tok)
		if depth == 0 {
			return toks, false
		}
	}
}

// lexerTokens is decoderTokens for the lexer; deep is whether it stopped at maxDepth.
func lexerTokens(data []byte) (toks []token, failed, deep bool, l *lexer) {
	l = newLexer(data)
	for l.state != wantNothing {
		t, err := l.Token()
		if err != nil {
			return toks, true, len(l.open) == maxDepth, l
		}
		toks = append(toks, t)
	}
	return toks, false, false, l
}

// checkLexer compares the lexer with encoding/json on data: the same tokens, an error at
// the same token, and for a complete value, json.Valid agrees on the trailing data.
func checkLexer(t *testing.T, data []byte) {
	got, gotErr, deep, l := lexerTokens(data)
	want, wantErr := decoderTokens(data)
	if deep { // encoding/json's Token does not bound nesting, its Unmarshal does
		if json.Valid(data) {
			t.Fatalf("%q: the lexer stopped at depth %d, json.Valid accepts it", data, maxDepth)
		}
		return
	}
	if len(got) != len(want) || gotErr != wantErr {
		t.Fatalf("%q:\nlexer   %v (error %v)\ndecoder %v (error %v)", data, got, gotErr, want, wantErr)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%q: token %d is %v, encoding/json reads %v", data, i, got[i], want[i])
		}
	}
	var se *json.SyntaxError
	if gotErr && !errors.As(json.Unmarshal(data, new(struct{})), &se) {
		t.Fatalf("%q: the lexer fails, json.Unmarshal finds no syntax error", data)
	}
	if !gotErr && json.Valid(data) == l.Trailing() {
		t.Fatalf("%q: json.Valid is %v but trailing data is %v", data, json.Valid(data), l.Trailing())
	}
}

func TestLexer(t *testing.T) {
	for _, s := range lexerSeeds {
		checkLexer(t, []byte(s))
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, failed, isDeep, _ := lexerTokens([]byte(deep)); !failed || !isDeep {
		t.Errorf("nesting %d deep: failed %v, at the bound %v", maxDepth+1, failed, isDeep)
	}
	checkLexer(t, []byte(deep))
}

var lexerSeeds = []string{
	``, ` `, `{}`, `[]`, `[1, 2.5e-3, -0, "x", true, false, null, {"a": [{}]}]`, `{"a":1,"b":{"c":[]}} `,
	`{"a":1}x`, `{"a":1}{}`, `[1,]`, `[,1]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":}`, `[01]`, `[1.]`, `[.5]`,
	`[1e]`, `[-]`, `[tru]`, `[nul]`, `[truex]`, `"\u00e9\n\"\\\/"`, `"\x"`, `"\u12"`, "\"\x01\"", "\"\xff\xfe\"",
	`"abc`, `{"a`, `[`, `{"a":[1,2}`, `]`, `}`, `{"a":1]`, "\ufeff{}", `[1e400, -1e-400, 123456789012345678901234567890]`,
}

func FuzzLexer(f *testing.F) {
	for _, s := range lexerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkLexer)
}

func TestParseWhole(t *testing.T) {
	for _, tc := range []struct {
		s    string
		v    int64
		kind wholeKind
	}{
		{"0", 0, whole}, {"-0", 0, whole}, {"-0.0e-5", 0, whole}, {"0e999999999999999999999", 0, whole},
		{"1e11", 100_000_000_000, whole}, {"2.50e1", 25, whole}, {"1E+2", 100, whole}, {"100e-2", 1, whole},
		{"1152921504606846975.0", 1<<60 - 1, whole}, {"9007199254740993", 1<<53 + 1, whole},
		{"9223372036854775807", 1<<63 - 1, whole}, {"-9223372036854775808", -1 << 63, whole},
		{"9223372036854775808", 0, tooLarge}, {"-9223372036854775809", 0, tooLarge}, {"1e19", 0, tooLarge},
		{"1e999999999999999999999", 0, tooLarge}, {"1.5", 0, fraction}, {"1e-1", 0, fraction},
		{"1e-999999999999999999999", 0, fraction}, {"12.0000000000000000000000001", 0, fraction},
		{"", 0, notNumber}, {"+1", 0, notNumber}, {"01", 0, notNumber}, {"1.", 0, notNumber}, {"0x10", 0, notNumber},
		{"NaN", 0, notNumber}, {"1e", 0, notNumber}, {" 1", 0, notNumber},
	} {
		if v, kind := parseWhole(tc.s); v != tc.v || kind != tc.kind {
			t.Errorf("parseWhole(%q) = %d, %d; want %d, %d", tc.s, v, kind, tc.v, tc.kind)
		}
	}
}

// FuzzParseWhole checks parseWhole against math/big's exact rationals, for the numbers
// whose exponents big.Rat can expand quickly.
func FuzzParseWhole(f *testing.F) {
	for _, s := range []string{"0", "1e11", "2.50e1", "-9223372036854775808", "9223372036854775808", "1.5", "1e-3", "12e-1", "-0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, kind := parseWhole(s)
		if !isJSONNumber(s) {
			if kind != notNumber {
				t.Fatalf("parseWhole(%q) = %d, %d for a non-number", s, v, kind)
			}
			return
		}
		if _, exp, ok := strings.Cut(strings.ToLower(s), "e"); ok && len(strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")) > 4 {
			return // big.Rat would expand 10^exp
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read the JSON number %q", s)
		}
		switch {
		case !r.IsInt():
			if kind != fraction {
				t.Fatalf("parseWhole(%q) = %d, %d; it is a fraction", s, v, kind)
			}
		case !r.Num().IsInt64():
			if kind != tooLarge {
				t.Fatalf("parseWhole(%q) = %d, %d; it is beyond int64", s, v, kind)
			}
		case kind != whole || v != r.Num().Int64():
			t.Fatalf("parseWhole(%q) = %d, %d; want %d", s, v, kind, r.Num().Int64())
		}
	})
}
