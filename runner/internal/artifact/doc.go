// Package artifact fetches a Flux source artifact (a tar.gz) over HTTP,
// verifies its sha256 digest and extracts it safely into a fresh directory.
//
// Extraction refuses absolute names, a ".." element anywhere in a name,
// device files and pipes, content or entry counts above a limit, and links
// that would leave the root; every file is created through an os.Root on
// the extraction directory, so no name can reach outside it. Symlinks
// and hard links whose targets stay inside the root are kept (Terraform
// module trees sometimes use them); they are created only after every
// regular file is written, so no file is ever written through a link.
package artifact
