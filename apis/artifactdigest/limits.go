package artifactdigest

// The size bounds of a source artifact, shared by everything that reads
// one: the runner (download and extraction), the workspace-controller's
// artifact proxy and configuration reader, and the WorkspaceSet's
// directories generator. One bound for all, so a WorkspaceSet never
// generates Workspaces from an artifact their runs refuse.
const (
	// MaxArtifactBytes is the largest artifact, as downloaded (the packed,
	// gzip'd tar), anything reads.
	MaxArtifactBytes = 256 << 20
	// MaxUnpackedBytes is the most file content the runner extracts from
	// one artifact.
	MaxUnpackedBytes = 1 << 30
	// MaxFiles is the most entries (files, directories, links) the runner
	// extracts from one artifact.
	MaxFiles = 100_000
)
