package dirsource

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// BenchmarkChangesAfterTheFirstRead is one edit's drain of the view once
// the first read of a large directory set (and drained) every object: the
// cost a pass pays in the source, whatever the directory's size.
func BenchmarkChangesAfterTheFirstRead(b *testing.B) {
	for _, n := range []int{10_000, 500_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			v := newView()
			first := make(map[objectKey]metav1.Object, n)
			for i := range n {
				k := objectKey{translator.KindConfigMap, types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("cm-%d", i)}}
				first[k] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: k.Name}}
			}
			v.set(first)
			v.changes() // the first call asks for a resync
			v.changes()
			edit := objectKey{translator.KindConfigMap, types.NamespacedName{Namespace: "shop", Name: "cm-0"}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				v.set(map[objectKey]metav1.Object{edit: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i)}}})
				if c := v.changes(); len(c.Objects) != 1 {
					b.Fatalf("%d changes, want 1", len(c.Objects))
				}
			}
		})
	}
}
