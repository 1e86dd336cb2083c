package envoy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// composeFile is what the local quickstart run reads from
// e2e/docker-compose.yaml, so Docker and non-Docker runs share one source.
// It understands only the shapes that file uses: flow-sequence commands,
// block-scalar check scripts, and "- ../host:/container[:ro]" mounts.
type composeFile struct {
	commands map[string][]string // service -> command arguments
	scripts  map[string]string   // check service -> shell script, $$ unescaped
	mounts   map[string]string   // container path -> absolute host path
}

var (
	composeService = regexp.MustCompile(`^  ([a-z0-9-]+):\s*$`)
	composeFlowCmd = regexp.MustCompile(`^\s+command: (\[.*\])\s*$`)
	composeMount   = regexp.MustCompile(`^\s+- (\.\./[^:]+):(/[^:]+)(:ro)?\s*$`)
)

func readCompose(path string) (*composeFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &composeFile{commands: map[string][]string{}, scripts: map[string]string{}, mounts: map[string]string{}}
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	service, inServices := "", false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "services:" {
			inServices = true
			continue
		}
		if m := composeService.FindStringSubmatch(line); m != nil && inServices {
			service = m[1]
			continue
		}
		if m := composeMount.FindStringSubmatch(line); m != nil {
			host, err := filepath.Abs(filepath.Join(filepath.Dir(path), m[1]))
			if err != nil {
				return nil, err
			}
			c.mounts[m[2]] = host
			continue
		}
		if m := composeFlowCmd.FindStringSubmatch(line); m != nil && service != "" {
			var args []string
			if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
				return nil, fmt.Errorf("%s:%d: command of %s: %w", path, i+1, service, err)
			}
			c.commands[service] = args
			continue
		}
		if strings.TrimSpace(line) == "command:" && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "- |" {
			body, next := blockScalar(lines, i+2, indentOf(lines[i+1]))
			c.scripts[service] = strings.ReplaceAll(body, "$$", "$")
			i = next - 1
		}
	}
	return c, nil
}

// blockScalar collects the lines from start that are indented deeper than
// parentIndent, without their common indentation.
func blockScalar(lines []string, start, parentIndent int) (string, int) {
	var body []string
	indent := -1
	i := start
	for ; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			body = append(body, "")
			continue
		}
		n := indentOf(lines[i])
		if n <= parentIndent {
			break
		}
		if indent < 0 {
			indent = n
		}
		body = append(body, lines[i][min(n, indent):])
	}
	return strings.TrimRight(strings.Join(body, "\n"), "\n") + "\n", i
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// localArgs rewrites container paths in a command to the mounted host paths.
func (c *composeFile) localArgs(args []string) []string {
	var containers []string
	for k := range c.mounts {
		containers = append(containers, k)
	}
	sort.Slice(containers, func(i, j int) bool { return len(containers[i]) > len(containers[j]) })
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for _, ctr := range containers {
			if a == ctr || strings.HasPrefix(a, ctr+"/") {
				out[i] = c.mounts[ctr] + strings.TrimPrefix(a, ctr)
				break
			}
		}
	}
	return out
}
