package node

import "strings"

// expand replaces $(NAME) in a container's command or argument with the
// value of NAME in env ("NAME=value" entries), as the kubelet does: a
// name env does not hold is left as written, and $$ is a literal $.
func expand(arg string, env []string) string {
	if !strings.Contains(arg, "$") {
		return arg
	}
	values := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			values[k] = v
		}
	}
	var b strings.Builder
	for i := 0; i < len(arg); i++ {
		if arg[i] != '$' || i+1 == len(arg) {
			b.WriteByte(arg[i])
			continue
		}
		switch next := arg[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(arg[i+2:], ')')
			if end < 0 {
				b.WriteString(arg[i:])
				return b.String()
			}
			name := arg[i+2 : i+2+end]
			if v, ok := values[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(arg[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
