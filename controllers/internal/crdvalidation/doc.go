// Package crdvalidation pins the admission behaviour of the magos.dev CRDs:
// valid objects are accepted and malformed ones are refused by the real
// apiserver with a message that names the offending field.
package crdvalidation
