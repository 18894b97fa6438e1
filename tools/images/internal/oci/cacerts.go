package oci

import (
	"bytes"
	"encoding/pem"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// CABundlePath is where the images hold their CA certificates; Go's
// crypto/x509 and most TLS stacks read it on Linux.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// CABundle returns the PEM bundle of the Mozilla NSS root certificates that
// golang.org/x/crypto/x509roots/fallback embeds (the version pinned in
// go.mod decides which roots; the build machine's own store is never read).
// Roots the NSS store distrusts after a date are left out: a PEM file
// cannot carry that constraint.
func CABundle() []byte {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return b.Bytes()
}
