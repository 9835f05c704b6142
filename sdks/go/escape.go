package atrium

import "strings"

// escape percent-encodes every byte but ASCII letters, digits and keep; with plus, a space
// becomes "+" (application/x-www-form-urlencoded).
func escape(value, keep string, plus bool) string {
	var out strings.Builder
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(keep, c) >= 0:
			out.WriteByte(c)
		case c == ' ' && plus:
			out.WriteByte('+')
		default:
			out.WriteByte('%')
			out.WriteByte("0123456789ABCDEF"[c>>4])
			out.WriteByte("0123456789ABCDEF"[c&15])
		}
	}
	return out.String()
}
