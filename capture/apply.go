package capture

import (
	"errors"
	"fmt"
	"os"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// Namespace is a connection to one network namespace's nftables.
type Namespace struct {
	conn *nftables.Conn
	file *os.File // the namespace's handle, nil for the current one
	name string   // for errors
}

// Open connects to the nftables of the network namespace at path (such
// as /var/run/netns/<name> or /proc/<pid>/ns/net); "" is the current one,
// an init container's Pod namespace.
func Open(path string) (*Namespace, error) {
	if path == "" {
		conn, err := nftables.New()
		if err != nil {
			return nil, fmt.Errorf("capture: nftables: %w", err)
		}
		return &Namespace{conn: conn, name: "the current network namespace"}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: network namespace: %w", err)
	}
	conn, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: nftables in %s: %w", path, err)
	}
	return &Namespace{conn: conn, file: f, name: "network namespace " + path}, nil
}

// Close releases the namespace's handle.
func (n *Namespace) Close() error {
	if n.file == nil {
		return nil
	}
	return n.file.Close()
}

func table() *nftables.Table {
	return &nftables.Table{Family: nftables.TableFamilyIPv4, Name: TableName}
}

// Apply replaces the capture table with c's rules in one netlink batch,
// which the kernel applies as one transaction: no moment with half the
// rules, and applying twice leaves one table.
func (n *Namespace) Apply(c Config) error {
	if err := c.check(); err != nil {
		return err
	}
	t := table()
	// Add-then-delete empties an existing table and is harmless on none.
	n.conn.AddTable(t)
	n.conn.DelTable(t)
	t = n.conn.AddTable(table())
	ch := n.conn.AddChain(&nftables.Chain{
		Name: chainName, Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest,
	})
	for _, r := range rules(c) {
		n.conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: r.exprs})
	}
	if err := n.conn.Flush(); err != nil {
		return fmt.Errorf("capture: programming table ip %s in %s: %w", TableName, n.name, err)
	}
	return nil
}

// Remove deletes the capture table (leaving the mesh); false when there
// was none.
func (n *Namespace) Remove() (bool, error) {
	present, err := n.present()
	if err != nil || !present {
		return false, err
	}
	n.conn.DelTable(table())
	if err := n.conn.Flush(); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil // removed meanwhile
		}
		return false, fmt.Errorf("capture: deleting table ip %s in %s: %w", TableName, n.name, err)
	}
	return true, nil
}

func (n *Namespace) present() (bool, error) {
	tables, err := n.conn.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return false, fmt.Errorf("capture: listing tables in %s: %w", n.name, err)
	}
	for _, t := range tables {
		if t.Name == TableName {
			return true, nil
		}
	}
	return false, nil
}
