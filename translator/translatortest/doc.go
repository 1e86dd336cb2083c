// Package translatortest holds what the main module's tests share: test CA
// certificates, TLS Secrets and the Envoy binary they validate
// configuration with. Only tests import it.
package translatortest
