// Package artifact fetches a Flux source artifact (a tar.gz) over HTTP,
// verifies its sha256 digest and extracts it safely into a fresh directory.
//
// Extraction uses github.com/fluxcd/pkg/tar, which refuses absolute names,
// names containing "../", device files and archives above a size limit. This
// package fills its gaps: it also refuses a ".." element anywhere in a name,
// a file count above a limit, and links that would leave the root. Symlinks
// and hard links whose targets stay inside the root are kept (Terraform
// module trees sometimes use them); they are created only after every
// regular file is written, so no file is ever written through a link.
package artifact
