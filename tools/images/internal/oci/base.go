package oci

// The non-root identity every image runs as (the chart and the runner Jobs
// set runAsNonRoot; 65532 is the customary "nonroot" ID of distroless
// images).
const (
	NonRootUID  = 65532
	NonRootName = "nonroot"
	NonRootHome = "/home/nonroot"
)

// baseEntries are the files every image holds besides its own: the user
// and group databases (root and nonroot, both without a login shell, since
// the images have none), a hosts lookup order for Go's resolver, the CA
// bundle, a sticky /tmp and nonroot's home.
func baseEntries() []Entry {
	return []Entry{
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "/etc/group", Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{Path: "/etc/nsswitch.conf", Data: []byte("hosts: files dns\n")},
		{Path: CABundlePath, Data: CABundle()},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/root", Dir: true, Mode: 0o700},
		{Path: NonRootHome, Dir: true, Mode: 0o700, UID: NonRootUID, GID: NonRootUID},
	}
}
