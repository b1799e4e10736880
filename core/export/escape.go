package export

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escaping: no input becomes code.
//
// A generated script holds strings the user typed or a file named (the model's name,
// layer and module names, notes quoting them). Each lands in one of two places, and each
// place has one writer here:
//   - a Python string literal (pyStr): double-quoted, with every character that could end
//     or change the literal escaped;
//   - a comment (commentText), in Python or in a shell script: a comment ends only at a
//     line break, so the text keeps no line break of any kind, and no character that a
//     reader or an editor would show other than as written (controls, bidirectional
//     overrides, invalid UTF-8: the "Trojan Source" attacks, Boucher and Anderson 2021).
//
// Shell scripts take no user string outside comments: Megatron-LM's arguments are numbers
// and a layout pipeplan writes from a fixed alphabet.

// pyStr writes s as a Python 3 string literal whose value is s: what Python's
// os.fsdecode would make of the same bytes. Printable characters stand as themselves
// (Python reads source as UTF-8); backslash, the double quote and every character that is
// not graphic are escaped as Python's \n, \xNN, \uNNNN and \UNNNNNNNN read them; a byte
// that is not UTF-8 becomes the lone surrogate U+DC80 + byte (Python's surrogateescape),
// so distinct byte strings stay distinct literals.
func pyStr(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			writeEscaped(&b, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// commentText writes s so that it can stand in a line comment of any language pipeplan
// writes (Python's #, the shell's #) without ending it: a line break, a control
// character, a character that is not graphic (a bidirectional override, a line or
// paragraph separator) or a byte that is not UTF-8 is written as a Go-style escape
// (\n, \x00, \u202e), and a backslash before such an escape is doubled, so the comment
// shows what the input held. Everything else stands as written.
func commentText(s string) string {
	clean := true
	for _, r := range s {
		if !commentSafe(r) || r == '\\' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case commentSafe(r):
			b.WriteRune(r)
		default:
			writeEscaped(&b, r)
		}
	}
	return b.String()
}

// commentSafe reports whether r may stand as itself in a comment: a graphic character
// (letters, marks, numbers, punctuation, symbols) or the ASCII space. Other spaces
// (U+2028 and U+2029 among them) and format characters are not.
func commentSafe(r rune) bool {
	return r == ' ' || (r != utf8.RuneError && unicode.IsGraphic(r) && !unicode.IsSpace(r))
}

// writeEscaped writes r as itself when it is graphic and not a space other than ' ', and
// otherwise with the escape for its size, which Python and Go read alike: \xNN under
// 0x80, \uNNNN in the basic plane, \UNNNNNNNN beyond.
func writeEscaped(b *strings.Builder, r rune) {
	switch {
	case commentSafe(r):
		b.WriteRune(r)
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	case r <= 0xffff:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

// comment writes one comment line: the marker c, a space and the text, escaped.
func comment(w *strings.Builder, c, text string) {
	w.WriteString(c)
	w.WriteByte(' ')
	w.WriteString(commentText(text))
	w.WriteByte('\n')
}
