package v1alpha1

// The engine image contract. An engine image, <repository>/magos-engine-<engine>:<version>
// (built by `make images`, e.g. ghcr.io/magos-dev/magos-engine-opentofu:1.10.6),
// holds the engine binary under EngineImageDir and, as its entrypoint,
// EngineImageInstaller with the engine, version and binary as flags. It
// runs as user 65532 and has no shell.
//
// A runner Job's init container runs the image with one argument, the
// directory where it mounts the volume the runner reads as its versions
// directory (MAGOS_VERSIONS_DIR); the installer copies the binary to
// <dir>/<engine>/<version>/<binary> (tofu or terraform), executable and
// read-only, through a temporary file and a rename:
//
//	/engine/install -engine=opentofu -version=1.10.6 -binary=/engine/tofu <dir>
const (
	// EngineImageDir is the directory of the engine binary in an engine image.
	EngineImageDir = "/engine"
	// EngineImageInstaller is the engine image's entrypoint program.
	EngineImageInstaller = "/engine/install"
	// EngineImageNamePrefix precedes the engine in an engine image's name: magos-engine-opentofu.
	EngineImageNamePrefix = "magos-engine-"
)

// How the workspace-controller runs an engine image: as the runner Pod's
// init container EngineInitContainer (the image's own entrypoint, args
// [EngineInstallDir]) with the emptyDir volume EngineVolume mounted at
// EngineInstallDir; the runner container mounts the same volume read-only at
// its versions directory (MAGOS_VERSIONS_DIR).
const (
	EngineInitContainer = "engine"
	EngineVolume        = "engines"
	EngineInstallDir    = "/magos/engines"
	// EngineImageVersionPlaceholder in an engine image template is replaced
	// with the engine version, e.g. ghcr.io/magos-dev/magos-engine-opentofu:{version}.
	EngineImageVersionPlaceholder = "{version}"
)
