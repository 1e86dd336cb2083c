package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "json", "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "file", "a.yaml")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	if line["msg"] != "shown" || line["file"] != "a.yaml" {
		t.Fatalf("line = %v", line)
	}

	buf.Reset()
	log, err = newLogger(&buf, "text", "DEBUG")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("detail")
	if !strings.Contains(buf.String(), "level=DEBUG msg=detail") {
		t.Fatalf("text line = %q", buf.String())
	}

	for _, bad := range [][2]string{{"xml", "info"}, {"text", "loud"}} {
		if _, err := newLogger(&buf, bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), `"`) {
			t.Errorf("newLogger(%q, %q) = %v, want an error quoting the value", bad[0], bad[1], err)
		}
	}
}
