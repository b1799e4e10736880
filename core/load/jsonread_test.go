package load

import "testing"

func TestCountObjects(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  int
	}{
		{`{"a": 1}, {"b": [1, {"c": "}]{["}]}, {} ]`, 10, 3},
		{`{}, {}, {}]`, 2, 2},
		{`]`, 10, 0},
		{`0, 0, {}]`, 10, 0},
		{`{}, 0, {}]`, 10, 1},
		{`{"s": "\"}"}, {}]`, 10, 2},
		{`{"unclosed": [`, 10, 1},
		{` { } , { } `, 10, 2},
	} {
		if got := countObjects([]byte(tc.in), 0, tc.limit); got != tc.want {
			t.Errorf("countObjects(%s, %d) = %d, want %d", tc.in, tc.limit, got, tc.want)
		}
	}
}
