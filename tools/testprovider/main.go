package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/magos-dev/magos/tools/testprovider/internal/provider"
)

// version is the provider version reported to OpenTofu; it must match the
// version directory of the filesystem mirror the binary is installed into.
var version = "0.1.0"

func main() {
	debug := flag.Bool("debug", false, "run the provider in debug mode (for a debugger; prints TF_REATTACH_PROVIDERS)")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
