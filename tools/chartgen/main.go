// Command chartgen writes what the Helm charts derive from a single source:
// every chart's version from charts/magos/Chart.yaml's appVersion, each
// controller subchart's values.schema.json from charts/magos/schema/, and
// charts/magos/README.md from the comments of the values files. `make
// generate` runs it; `make verify` fails when its output is not committed.
package main

import (
	"flag"
	"log"
	"path/filepath"
)

func main() {
	root := flag.String("root", "..", "repository root")
	flag.Parse()
	umbrella := filepath.Join(*root, "charts", "magos")
	subcharts, err := filepath.Glob(filepath.Join(umbrella, "charts", "*"))
	if err != nil {
		log.Fatal(err)
	}
	version, err := stampVersion(*root, subcharts)
	if err != nil {
		log.Fatal(err)
	}
	if err := writeSchemas(umbrella, subcharts); err != nil {
		log.Fatal(err)
	}
	if err := writeReadme(umbrella, subcharts, version); err != nil {
		log.Fatal(err)
	}
}
