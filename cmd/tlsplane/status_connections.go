package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/xds"
)

// statusColumns are the type columns of the connections table, as
// istioctl proxy-status orders them, with their type URLs.
var statusColumns = []struct{ title, typeURL string }{
	{"CDS", resource.ClusterType},
	{"EDS", resource.EndpointType},
	{"SDS", resource.SecretType},
	{"LDS", resource.ListenerType},
	{"RDS", resource.RouteType},
}

// printConnections prints /debug/connections as a table or as JSON.
func printConnections(w io.Writer, admin *adminClient, format string) error {
	body, err := admin.get("/debug/connections")
	if err != nil {
		return err
	}
	var conns xds.Connections
	if err := json.Unmarshal(body, &conns); err != nil {
		return fmt.Errorf("admin server %s: /debug/connections: %v", admin.base, err)
	}
	if format == formatJSON {
		return writeIndentedJSON(w, conns)
	}
	_, err = w.Write(connectionsTable(conns))
	return err
}

// connectionsTable is one row per Envoy; below a row with a NACKED type,
// one line per rejection with its version and Envoy's message. Durations
// are measured on the server's clock (conns.At).
func connectionsTable(conns xds.Connections) []byte {
	if len(conns.Connections) == 0 {
		return []byte("No Envoy is connected.\n")
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	header := []string{"NODE", "FLEET", "API", "PEER", "SINCE"}
	for _, c := range statusColumns {
		header = append(header, c.title)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	notes := make([][]string, len(conns.Connections))
	for i, c := range conns.Connections {
		row := []string{c.Node, orDash(c.Fleet), c.API, orDash(c.Peer), age(conns.At.Sub(c.Since))}
		for _, col := range statusColumns {
			s, ok := typeStatus(c, col.typeURL)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, stateCell(s, conns))
			if s.State == xds.NACKed && s.NACK != nil {
				notes[i] = append(notes[i], fmt.Sprintf("    %s NACKED version %s: %s", col.title, orDash(s.NACK.Version), oneLine(s.NACK.Message)))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	// The notes go between the aligned rows, outside the tabwriter: a
	// line without cells would restart its columns.
	lines := strings.SplitAfter(table.String(), "\n")
	var out bytes.Buffer
	out.WriteString(lines[0])
	for i := range conns.Connections {
		out.WriteString(lines[i+1])
		for _, n := range notes[i] {
			out.WriteString(n + "\n")
		}
	}
	return out.Bytes()
}

func typeStatus(c xds.Connection, typeURL string) (xds.TypeStatus, bool) {
	for _, s := range c.Types {
		if s.TypeURL == typeURL {
			return s, true
		}
	}
	return xds.TypeStatus{}, false
}

// stateCell is SYNCED, NACKED, NOT SENT, or STALE (for 3s).
func stateCell(s xds.TypeStatus, conns xds.Connections) string {
	if s.State == xds.Stale && s.BehindSince != nil {
		return fmt.Sprintf("STALE (for %s)", age(conns.At.Sub(*s.BehindSince)))
	}
	return s.State
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps Envoy's message on its note's line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func writeIndentedJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
