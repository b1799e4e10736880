package load

// A strict JSON reader shared by the importers of JSON (native and Graphcore). It reads a
// document token by token (a lexer with json.Decoder.Token's behaviour, jsonlex.go), so
// that a long array is decoded one element at a time, converted as it comes, and memory
// stays a small multiple of the input; and it refuses what encoding/json lets pass
// silently:
//
//   - a key given twice (encoding/json keeps the last);
//   - null for a value (encoding/json leaves the field at zero);
//   - a string where a number belongs ("NaN", "Infinity", "12");
//   - a count that is not a whole number, or does not fit int64 (encoding/json refuses
//     1e11 for an int64; here it is the whole number 100000000000).
//
// Every such error names its field by its path ("layers[3].param_bytes"). Reading stops
// at the first syntax error, after maxErrors field errors, or at an array longer than
// its bound (model.MaxLayers layers, cluster.MaxStages devices).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"pipeplan/core/internal/jsonscan"
	"pipeplan/core/model"
)

// maxErrors is how many field errors a reader collects before it stops: enough to fix
// several mistakes at once, few enough that a file of a million bad elements is refused
// at once.
const maxErrors = 10

// reader reads one JSON document; see the file comment.
type reader struct {
	data   []byte
	lex    *lexer
	es     model.Errors
	err    error // the syntax error that stopped reading
	halted bool  // an array exceeded its bound: reading stopped
	// path is where the reader is: keys and indices from the root, made into a string
	// ("layers[3].param_bytes") only for an error.
	path []step
	// bounds caps the arrays under these top-level keys ("layers": model.MaxLayers).
	bounds map[string]int
	// fieldsOf caches, per struct type, its JSON keys and their field indices.
	fieldsOf map[reflect.Type]structFields
}

// step is one step of a path: an object's key, a map's key or an array's index.
type step struct {
	key   string
	index int
	kind  byte // '.' key, '"' map key, '[' index
}

// where returns the path the reader is at.
func (r *reader) where() string {
	var b strings.Builder
	for _, s := range r.path {
		switch s.kind {
		case '.':
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			if s.key == "" {
				b.WriteString(`""`) // the empty key, named
			}
			b.WriteString(s.key)
		case '"':
			fmt.Fprintf(&b, "[%q]", s.key)
		default:
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	return b.String()
}

func (r *reader) push(s step) { r.path = append(r.path, s) }
func (r *reader) pop()        { r.path = r.path[:len(r.path)-1] }

func newReader(data []byte) *reader { return &reader{data: data, lex: newLexer(data)} }

// stopped reports whether reading has ended: a syntax error, enough field errors, or an
// array over its bound.
func (r *reader) stopped() bool { return r.err != nil || r.halted || len(r.es) >= maxErrors }

// add records a field error at the reader's path, unless reading has stopped.
func (r *reader) add(format string, args ...any) {
	if !r.stopped() {
		r.es.Add(r.where(), format, args...)
	}
}

// addAt records a field error at key of the object the reader is in.
func (r *reader) addAt(key, format string, args ...any) {
	r.push(step{key: key, kind: '.'})
	r.add(format, args...)
	r.pop()
}

// token reads the next token; ok is false once reading has stopped.
func (r *reader) token() (t token, ok bool) {
	if r.stopped() {
		return token{}, false
	}
	t, err := r.lex.Token()
	if err != nil {
		r.err = r.syntaxError()
		return token{}, false
	}
	return t, true
}

// syntaxError describes the syntax error the lexer met as encoding/json does, with its
// line and column: json.Unmarshal's validation of the whole input finds the same first
// error (FuzzLexer checks that they agree).
func (r *reader) syntaxError() error {
	var se *json.SyntaxError
	if errors.As(json.Unmarshal(r.data, new(struct{})), &se) {
		line, col := position(r.data, se.Offset)
		return fmt.Errorf("JSON syntax error at line %d, column %d: %v", line, col, se)
	}
	line, col := position(r.data, r.lex.InputOffset()+1)
	return fmt.Errorf("JSON syntax error at line %d, column %d", line, col)
}

// end finishes reading: the syntax error that stopped it, else the field errors, else an
// error for data after the JSON value.
func (r *reader) end() error {
	switch {
	case r.err != nil:
		return r.err
	case len(r.es) > 0:
		return r.es
	case r.lex.Trailing(): // not More, which takes a stray ']' or '}' for an end
		line, col := position(r.data, r.lex.InputOffset()+1)
		return fmt.Errorf("unexpected data after the JSON value at line %d, column %d", line, col)
	}
	return nil
}

// skip reads the rest of a value whose first token is t.
func (r *reader) skip(t token) {
	if t.kind != '{' && t.kind != '[' {
		return
	}
	for depth := 1; depth > 0; {
		t, ok := r.token()
		if !ok {
			return
		}
		switch t.kind {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
}

// mismatch records that the value starting with t is not what it must be, and skips it.
func (r *reader) mismatch(want string, t token) {
	if t.kind == 'n' {
		r.add("must be %s, got null (leave the key out for the default)", want)
		return
	}
	r.add("must be %s, got %s", want, kindOf(t))
	r.skip(t)
}

// kindOf names the JSON type of a value by its first token, for error messages.
func kindOf(t token) string {
	switch t.kind {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '0':
		return "a number"
	case '"':
		return "a string " + strconv.Quote(clip(t.text))
	case '[':
		return "an array"
	}
	return "an object"
}

// object reads an object whose first token is t: field reads the value of each key (the
// reader's path then ends at the key, or at ["key"] with mapKeys). A key given twice is
// an error.
func (r *reader) object(t token, mapKeys bool, field func(key string)) {
	if t.kind != '{' {
		r.mismatch("a JSON object", t)
		return
	}
	kind := byte('.')
	if mapKeys {
		kind = '"'
	}
	var few [16]string // the keys seen, in a map once there are more
	seen, many := few[:0], map[string]bool(nil)
	for !r.stopped() && r.lex.More() {
		kt, ok := r.token()
		if !ok {
			return
		}
		key := kt.text // the lexer returns only strings as keys
		dup := many[key]
		for _, k := range seen {
			dup = dup || k == key
		}
		r.push(step{key: key, kind: kind})
		if dup {
			r.add("is given twice (a key must appear once in its object)")
			if t, ok := r.token(); ok {
				r.skip(t)
			}
		} else {
			switch {
			case many != nil:
				many[key] = true
			case len(seen) < len(few):
				seen = append(seen, key)
			default:
				many = map[string]bool{key: true}
				for _, k := range seen {
					many[k] = true
				}
			}
			field(key)
		}
		r.pop()
	}
	r.token() // the closing '}'
}

// fields reads an object whose keys must be among allowed.
func (r *reader) fields(t token, allowed []string, field func(key string)) {
	r.object(t, false, func(key string) {
		for _, a := range allowed {
			if key == a {
				field(key)
				return
			}
		}
		r.unknown(key, allowed)
	})
}

// unknown records a key the format does not define (most likely a typing mistake, which
// would otherwise read as zero), at the object holding it, and skips its value.
func (r *reader) unknown(key string, allowed []string) {
	last := r.path[len(r.path)-1]
	r.pop()
	r.add("unknown field %q; expected one of %s", key, strings.Join(allowed, ", "))
	r.push(last)
	if t, ok := r.token(); ok {
		r.skip(t)
	}
}

// array reads an array whose first token is t, elem reading each element (the reader's
// path then ends at its index). A top-level array longer than its bound in r.bounds stops
// reading.
func (r *reader) array(t token, elem func(i int)) {
	if t.kind != '[' {
		r.mismatch("a JSON array", t)
		return
	}
	bound, bounded := 0, false
	if len(r.path) == 1 {
		bound, bounded = r.bounds[r.path[0].key]
	}
	for i := 0; !r.stopped() && r.lex.More(); i++ {
		if bounded && i == bound {
			r.add("must hold at most %d entries", bound)
			r.halted = true
			return
		}
		r.push(step{index: i, kind: '['})
		elem(i)
		r.pop()
	}
	r.token() // the closing ']'
}

// str reads a string.
func (r *reader) str() string {
	t, ok := r.token()
	if !ok {
		return ""
	}
	if t.kind != '"' {
		r.mismatch("a string", t)
	}
	return t.text
}

// number reads a number, returning its literal; ok is false (and an error recorded) for
// any other value.
func (r *reader) number() (string, bool) {
	t, ok := r.token()
	if !ok {
		return "", false
	}
	if t.kind != '0' {
		r.mismatch("a number", t)
		return "", false
	}
	return t.text, true
}

// whole reads a whole number in [0, limit]: "1e11" is one, "1.5" is not.
func (r *reader) whole(limit int64) int64 {
	n, ok := r.number()
	if !ok {
		return 0
	}
	v, kind := parseWhole(n)
	switch {
	case kind == notNumber:
		r.add("must be a number, got %s", n)
	case strings.HasPrefix(n, "-") && (v < 0 || kind != whole):
		r.add("must be >= 0, got %s", n)
	case kind == tooLarge || v > limit:
		r.add("must be at most %d, got %s", limit, n)
	case kind == fraction:
		r.add("must be a whole number, got %s", n)
	default:
		return v
	}
	return 0
}

// positive reads a number in (0, limit].
func (r *reader) positive(limit float64) float64 {
	n, ok := r.number()
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(n, 64)
	switch {
	case err != nil && f != 0 || f > limit: // err: out of float64's range
		r.add("must be at most %g, got %s", limit, n)
	case f <= 0:
		r.add("must be > 0, got %s", n)
	default:
		return f
	}
	return 0
}

// wholeKind says what parseWhole found.
type wholeKind int

const (
	whole     wholeKind = iota // a whole number within int64
	fraction                   // a number with a fractional part
	tooLarge                   // a whole number beyond int64
	notNumber                  // not a JSON number literal
)

// parseWhole reads a JSON number literal as a whole number, exactly: the digits and the
// exponent are read as decimal text, never rounded through float64, so "1e11", "2.50e1"
// and "-0.0" are whole (100000000000, 25, 0), "1.5" and "1e-400" are fractions, and
// "9223372036854775808" (2^63) and "1e30" are too large. The work is bounded by the
// length of the literal, whatever its exponent.
func parseWhole(s string) (int64, wholeKind) {
	if v, ok := plainWhole(s); ok { // most sizes and counts: digits alone
		return v, whole
	}
	if !isJSONNumber(s) {
		return 0, notNumber
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return 0, whole // zero, whatever its exponent
	}
	// The value is digits * 10^e.
	e := -len(frac)
	if hasExp {
		x, err := strconv.Atoi(exp)
		const most = 1 << 20 // far beyond any exponent that can still give an int64
		switch {
		case err != nil && strings.HasPrefix(exp, "-") || x < -most:
			return 0, fraction
		case err != nil || x > most:
			return 0, tooLarge
		}
		e += x
	}
	trimmed := strings.TrimRight(digits, "0")
	e += len(digits) - len(trimmed)
	digits = trimmed
	if e < 0 {
		return 0, fraction // a non-zero digit after the point
	}
	if len(digits)+e > 19 {
		return 0, tooLarge
	}
	u, err := strconv.ParseUint(digits+strings.Repeat("0", e), 10, 64)
	switch {
	case err != nil:
		return 0, tooLarge
	case neg && u <= 1<<63:
		return int64(-u), whole // -u wraps to the right int64 for u = 2^63 too
	case !neg && u < 1<<63:
		return int64(u), whole
	}
	return 0, tooLarge
}

// plainWhole returns the value of s when s is a JSON number of at most 18 digits and
// nothing else, which an int64 holds.
func plainWhole(s string) (int64, bool) {
	if s == "" || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return 0, false
	}
	var v int64
	for i := range len(s) {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// isJSONNumber reports whether s is a JSON number literal.
func isJSONNumber(s string) bool {
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return false
	}
	end, ok := numberEnd([]byte(s), 0)
	return ok && end == len(s)
}

// structFields maps the JSON keys of a struct to its field indices, and lists the keys.
type structFields struct {
	index map[string]int
	keys  []string
}

// structFieldsOf returns the JSON keys of struct type t from its json tags.
func (r *reader) structFieldsOf(t reflect.Type) structFields {
	if f, ok := r.fieldsOf[t]; ok {
		return f
	}
	f := structFields{index: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" || name == "" {
			continue
		}
		f.index[name] = i
		f.keys = append(f.keys, name)
	}
	if r.fieldsOf == nil {
		r.fieldsOf = map[reflect.Type]structFields{}
	}
	r.fieldsOf[t] = f
	return f
}

// measuredOnType is read from a string or an object (model.MeasuredOn.UnmarshalJSON).
var measuredOnType = reflect.TypeOf(model.MeasuredOn{})

// decode reads the next value into v, a struct of the native formats (model.Model,
// cluster.Cluster) or one of its fields, by their json tags. Every key must name a field;
// a field may be left out (it keeps its zero value) but not given as null.
func (r *reader) decode(v reflect.Value) {
	if t, ok := r.token(); ok {
		r.decodeFrom(t, v)
	}
}

// decodeFrom decodes into v the value whose first token is t.
func (r *reader) decodeFrom(t token, v reflect.Value) {
	if t.kind == 'n' {
		r.mismatch(expected(v.Type()), t)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		r.decodeFrom(t, p.Elem())
		v.Set(p)
	case reflect.Struct:
		if v.Type() == measuredOnType && t.kind == '"' {
			// model.MeasuredOn is a preset name (a string) or a device object.
			v.Set(reflect.ValueOf(model.MeasuredOn{Name: t.text}))
			return
		}
		sf := r.structFieldsOf(v.Type())
		r.object(t, false, func(key string) {
			if i, known := sf.index[key]; known {
				r.decode(v.Field(i))
			} else {
				r.unknown(key, sf.keys)
			}
		})
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		r.object(t, true, func(key string) {
			e := reflect.New(v.Type().Elem()).Elem()
			r.decode(e)
			v.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		})
	case reflect.Slice:
		count := 0 // the elements ahead, when counted
		if bound, ok := r.bounds[r.topKey()]; ok && t.kind == '[' && v.Cap() == 0 {
			// A profile's layers: counted first, so that a million of them are
			// allocated once instead of copied at each doubling. The count checks no
			// syntax, so at most one element per minElementBytes of the input is
			// allocated before any is read ("{}" repeated after a syntax error costs a
			// small multiple of the file), and the rest once the slice is full.
			count = countObjects(r.data, r.lex.pos, bound)
			v.Set(reflect.MakeSlice(v.Type(), 0, min(count, (len(r.data)-r.lex.pos)/minElementBytes)))
		}
		r.array(t, func(i int) {
			if i == v.Cap() { // double: append's gentler growth of large slices allocates more in all
				grown := reflect.MakeSlice(v.Type(), i, max(4, 2*i, count))
				reflect.Copy(grown, v)
				v.Set(grown)
			}
			v.SetLen(i + 1)
			r.decode(v.Index(i))
		})
	case reflect.String:
		if t.kind != '"' {
			r.mismatch("a string", t)
			return
		}
		v.SetString(t.text)
	case reflect.Bool:
		if t.kind != 't' && t.kind != 'f' {
			r.mismatch("true or false", t)
			return
		}
		v.SetBool(t.kind == 't')
	case reflect.Float64:
		if t.kind != '0' {
			r.mismatch("a number", t)
			return
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil { // beyond float64's range (tiny values round to 0 without error)
			r.add("must be a finite number, got %s", t.text)
			return
		}
		v.SetFloat(f)
	case reflect.Int64, reflect.Int:
		if t.kind != '0' {
			r.mismatch("a number", t)
			return
		}
		i, kind := parseWhole(t.text)
		switch {
		case kind == fraction:
			r.add("must be a whole number, got %s", t.text)
		case kind != whole || v.OverflowInt(i):
			r.add("must be a whole number between -2^63 and 2^63-1, got %s", t.text)
		default:
			v.SetInt(i)
		}
	default:
		// Not reachable from input: only the types of the native formats get here.
		panic(fmt.Sprintf("load: no JSON decoding for %s at %s", v.Type(), r.where()))
	}
}

// expected says what a value of type t is in JSON, for error messages.
func expected(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return expected(t.Elem())
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice:
		return "a JSON array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "a number"
}

// minElementBytes is the fewest bytes of input per element that a pre-counted array is
// allocated for. Real layers hold a name, times and sizes, a hundred bytes or more; the
// slice of a terser file grows by doubling past what is allocated ahead.
const minElementBytes = 32

// topKey is the top-level key the reader is under, when it is directly under one.
func (r *reader) topKey() string {
	if len(r.path) != 1 {
		return ""
	}
	return r.path[0].key
}

// countObjects counts the objects the array whose elements start at data[pos] begins
// with, up to limit: the capacity of the slice they decode into. It stops at the first
// element that is not an object, and checks no syntax (on malformed input the count is
// a worse guess, and the lexer reports the error), so a hostile array of numbers
// allocates nothing.
func countObjects(data []byte, pos, limit int) int {
	n := 0
	for ; n < limit; n++ {
		if pos = jsonscan.Space(data, pos); pos == len(data) || data[pos] != '{' {
			return n
		}
		if pos = jsonscan.Space(data, jsonscan.ValueEnd(data, pos)); pos == len(data) || data[pos] != ',' {
			return n + 1
		}
		pos++
	}
	return n
}

// hasTopKey reports whether data is a JSON object with one of keys at its top level. It
// scans the bytes without decoding values (a 50 MB array is skipped at memory speed) and
// without checking the syntax, which the decoder then does.
func hasTopKey(data []byte, keys ...string) bool {
	found := false
	jsonscan.Members(data, func(key []byte, _ int) bool {
		found = isKey(key, keys)
		return !found
	})
	return found
}

// isKey reports whether the quoted JSON string q is one of keys.
func isKey(q []byte, keys []string) bool {
	var s string
	if bytes.IndexByte(q, '\\') < 0 {
		s = string(q[1 : len(q)-1])
	} else if json.Unmarshal(q, &s) != nil {
		return false
	}
	for _, k := range keys {
		if s == k {
			return true
		}
	}
	return false
}
