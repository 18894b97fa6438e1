package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// sbom runs `magos-image sbom`: an SPDX document beside each archive,
// <archive without .tar>.spdx.json.
func sbom(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("need image archives")
	}
	for _, file := range fs.Args() {
		a, err := oci.ReadArchive(file)
		if err != nil {
			return err
		}
		doc, err := oci.SBOM(a.Tag.String(), a.Image)
		_ = a.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		out := strings.TrimSuffix(file, ".tar") + ".spdx.json"
		if err := os.WriteFile(out, append(doc, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s\n", a.Tag, out)
	}
	return nil
}
