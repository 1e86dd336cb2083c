package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tlsplane/tlsplane/translator"
)

// defaultBackendCertificateSample is the percent of upstream requests and
// connections whose backend certificate Envoy reports: at 1,000 requests a
// second, ten sightings a second (every busy host seen within minutes),
// for about 1.5 % of Envoy's CPU, within the noise of the measurement
// (e2e/perf TestCertificateLogCost; 100 % costs about 14 %).
const defaultBackendCertificateSample = 1.0

// registerBackendCertificateFlags adds --backend-certificate-sample and
// --xds-cluster-name, which make the translator's certificate log.
func registerBackendCertificateFlags(fs *flag.FlagSet, b *translator.BackendCertificates) {
	b.SamplePercent = defaultBackendCertificateSample
	b.XDSCluster = translator.DefaultXDSCluster
	fs.Func("backend-certificate-sample", "the `percent` (0-100, default 1) of upstream TLS requests and connections of Gateway listeners whose backend certificate, TLS version and cipher Envoy reports to tlsplane's access log service; 0 turns the inventory off and pushes no access log", func(v string) error {
		p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
		if err != nil || math.IsNaN(p) || p < 0 || p > 100 {
			return fmt.Errorf("%q is not a percent from 0 to 100", v)
		}
		b.SamplePercent = p
		return nil
	})
	fs.Func("xds-cluster-name", "the `name` of the cluster in the Envoys' bootstrap that reaches tlsplane's xDS server (default "+translator.DefaultXDSCluster+", as in every bootstrap tlsplane ships): the access log of --backend-certificate-sample goes there", func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%q: want the bootstrap's cluster name", v)
		}
		b.XDSCluster = v
		return nil
	})
}
