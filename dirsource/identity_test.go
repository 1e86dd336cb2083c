package dirsource

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// A manifest saved with `kubectl get -o yaml` keeps its uid and
// resourceVersion through hand edits; the edit must still be served.
func TestEditKeepingUIDAndResourceVersionIsServed(t *testing.T) {
	dir := t.TempDir()
	service := func(port int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop, uid: u-1, resourceVersion: "42"}
spec:
  ports: [{name: https, port: %d, protocol: TCP}]
`, port)
	}
	path := filepath.Join(dir, "pay.yaml")
	write(t, path, service(80))

	changes := make(chan struct{}, 8)
	src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(msg string) { t.Errorf("warning: %s", msg) })})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, src, changes)
	<-src.Synced()

	tr := translator.New()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clusterNames := func() []string {
		var names []string
		for _, c := range tr.Translate(src.Inputs(), nil, now, translator.Options{}).Clusters {
			names = append(names, c.GetName())
		}
		return names
	}
	if got := clusterNames(); len(got) != 1 || got[0] != "shop/pay/80" {
		t.Fatalf("before the edit: clusters %v, want [shop/pay/80]", got)
	}

	if err := os.WriteFile(path, []byte(service(8080)), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no change signalled within 5s of the edit")
	}
	if got := clusterNames(); len(got) != 1 || got[0] != "shop/pay/8080" {
		t.Errorf("after the edit: clusters %v, want [shop/pay/8080] (the edit was not served)", got)
	}
}

// Every kind of Inputs is an object of the view, and Changes order the
// kinds as Inputs' fields are: a kind added to Inputs but not here would
// be read from files and never served, or served out of order.
func TestKeyedObjectsCoverEveryKindOfInputsInOrder(t *testing.T) {
	var in translator.Inputs
	fields := reflect.ValueOf(&in).Elem()
	for i := range fields.NumField() {
		f := fields.Field(i)
		o := reflect.New(f.Type().Elem().Elem())
		o.Interface().(metav1.Object).SetName(fields.Type().Field(i).Name)
		f.Set(reflect.Append(f, o))
	}
	got := keyedObjects(&in)
	if len(got) != fields.NumField() {
		t.Fatalf("keyedObjects lists %d objects of %d kinds of Inputs", len(got), fields.NumField())
	}
	for i, k := range got {
		if want := fields.Type().Field(i).Name; k.object.GetName() != want {
			t.Errorf("object %d is from Inputs.%s, want Inputs.%s", i, k.object.GetName(), want)
		}
		if order, ok := kindOrder[k.key.kind]; !ok || order != i {
			t.Errorf("kindOrder[%s] = %d (%v), want %d, the place of Inputs.%s", k.key.kind, order, ok, i, k.object.GetName())
		}
	}
}
