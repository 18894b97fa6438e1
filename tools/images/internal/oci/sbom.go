package oci

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// maxBinarySize bounds the files SBOM reads for Go build information.
const maxBinarySize = 512 << 20

// SBOM is an SPDX 2.3 document (JSON) of the image img tagged ref: the
// image, each Go binary in it with its main module and toolchain, and every
// module the binaries were built from, as the Go build information
// embedded in each binary records them (what `go version -m` prints). It
// is reproducible: its time is the image's creation time.
func SBOM(ref string, img v1.Image) ([]byte, error) {
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	binaries, err := goBinaries(img)
	if err != nil {
		return nil, err
	}
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              ref,
		DocumentNamespace: "https://github.com/magos-dev/magos/spdx/" + strings.NewReplacer(":", "-", "/", "-", "@", "-").Replace(ref) + "-" + digest.Hex,
		CreationInfo:      spdxCreation{Created: cfg.Created.UTC().Format(time.RFC3339), Creators: []string{"Tool: magos-image"}},
	}
	image := spdxPackage{
		SPDXID: "SPDXRef-Image", Name: ref, VersionInfo: digest.String(), DownloadLocation: "NOASSERTION",
		PrimaryPackagePurpose: "CONTAINER", FilesAnalyzed: false,
	}
	doc.Packages = append(doc.Packages, image)
	doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", image.SPDXID})
	modules := map[string]string{} // path@version → SPDXID
	for i, b := range binaries {
		id := fmt.Sprintf("SPDXRef-Binary-%d", i)
		doc.Packages = append(doc.Packages, spdxPackage{
			SPDXID: id, Name: b.Path, VersionInfo: moduleVersion(b.Info.Main), DownloadLocation: "NOASSERTION",
			PrimaryPackagePurpose: "APPLICATION", Comment: "built with " + b.Info.GoVersion + " from " + b.Info.Path,
			ExternalRefs: []spdxExternalRef{purl(b.Info.Main.Path, moduleVersion(b.Info.Main))},
		})
		doc.Relationships = append(doc.Relationships, spdxRelationship{image.SPDXID, "CONTAINS", id})
		deps := append([]*debug.Module{{Path: "stdlib", Version: b.Info.GoVersion}}, b.Info.Deps...)
		for _, m := range deps {
			if m.Replace != nil {
				m = m.Replace
			}
			key := m.Path + "@" + m.Version
			mid, ok := modules[key]
			if !ok {
				mid = fmt.Sprintf("SPDXRef-Module-%d", len(modules))
				modules[key] = mid
				doc.Packages = append(doc.Packages, spdxPackage{
					SPDXID: mid, Name: m.Path, VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
					PrimaryPackagePurpose: "LIBRARY", ExternalRefs: []spdxExternalRef{purl(m.Path, m.Version)},
				})
			}
			doc.Relationships = append(doc.Relationships, spdxRelationship{id, "DEPENDS_ON", mid})
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// goBinary is a Go program found in an image.
type goBinary struct {
	Path string
	Info *buildinfo.BuildInfo
}

// goBinaries reads the build information of every Go program in img's
// file system, in path order.
func goBinaries(img v1.Image) ([]goBinary, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []goBinary
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || h.Size < 4 || h.Size > maxBinarySize {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(data, []byte("\x7fELF")) {
			continue
		}
		info, err := buildinfo.Read(bytes.NewReader(data))
		if err != nil {
			continue // not a Go program
		}
		out = append(out, goBinary{Path: "/" + strings.TrimPrefix(h.Name, "/"), Info: info})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// moduleVersion is m's version; a module built from a checkout has none.
func moduleVersion(m debug.Module) string {
	if m.Version == "" || m.Version == "(devel)" {
		return "NOASSERTION"
	}
	return m.Version
}

func purl(path, version string) spdxExternalRef {
	loc := "pkg:golang/" + path
	if version != "NOASSERTION" && version != "" {
		loc += "@" + version
	}
	return spdxExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: loc}
}

type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreation       `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID                string            `json:"SPDXID"`
	Name                  string            `json:"name"`
	VersionInfo           string            `json:"versionInfo,omitempty"`
	DownloadLocation      string            `json:"downloadLocation"`
	FilesAnalyzed         bool              `json:"filesAnalyzed"`
	PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
	Comment               string            `json:"comment,omitempty"`
	ExternalRefs          []spdxExternalRef `json:"externalRefs,omitempty"`
}

type spdxExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}
