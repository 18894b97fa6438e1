// Package oci assembles container images from static binaries with
// go-containerregistry, without a container engine: a base layer with the
// non-root user 65532, CA certificates and no shell, one layer of the
// image's own files, fixed timestamps (the same inputs always give the same
// digest), and OCI labels. It writes each image as an OCI image layout in
// one tar file that `ctr images import` accepts, reads such files back and
// pushes them to a registry.
package oci
