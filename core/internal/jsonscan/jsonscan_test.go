package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestValueEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int // the end of the value at 0
	}{
		{`"a\"b" ,`, 6},
		{`{"a": [1, "]}", {"b": {}}]} tail`, 27},
		{`[[], {}] x`, 8},
		{`-1.5e3,`, 6},
		{`true]`, 4},
		{`"never closes`, 13},
		{`{"a": [`, 7},
	} {
		if got := ValueEnd([]byte(tc.in), 0); got != tc.want {
			t.Errorf("ValueEnd(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzValueEnd: on valid JSON, the value ends where the data does, less its white space;
// on any input, within the data.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`{"a": [1, "]"]} `, `"x\\"`, `[{"b": null}, 2]`, `1e5 `, `{"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pos := Space(data, 0)
		if pos == len(data) {
			return
		}
		end := ValueEnd(data, pos)
		if end < pos || end > len(data) {
			t.Fatalf("ValueEnd(%q, %d) = %d, outside the data", data, pos, end)
		}
		if !json.Valid(data) { // one value, with white space around it
			return
		}
		if want := len(bytes.TrimRight(data, " \t\r\n")); end != want {
			t.Errorf("ValueEnd(%q) = %d, want %d", data, end, want)
		}
	})
}

func TestMembers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{` {"a": 1, "b" : [2, "]"], "c": {"d": {}}} `, `"a"=1 "b"=[2, "]"] "c"={"d": {}}`},
		{`{}`, ``},
		{`[{"a": 1}]`, ``},
		{`{"a": 1, "b`, `"a"=1`},
		{`{"a" 1}`, ``},
		{`{"a": `, ``},
	} {
		var got []string
		Members([]byte(tc.in), func(key []byte, value int) bool {
			got = append(got, string(key)+"="+tc.in[value:ValueEnd([]byte(tc.in), value)])
			return true
		})
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("Members(%s): %s, want %s", tc.in, s, tc.want)
		}
	}
	n := 0
	Members([]byte(`{"a": 1, "b": 2}`), func([]byte, int) bool { n++; return false })
	if n != 1 {
		t.Errorf("Members went on after f returned false: %d calls", n)
	}
}
