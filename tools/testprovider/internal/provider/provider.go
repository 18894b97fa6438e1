package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Address is the provider's source address; its last part, the type name,
// prefixes every resource and data source name.
const Address = "registry.opentofu.org/magos/magostest"

// typeName is the provider's type name.
const typeName = "magostest"

// magostest is the provider. Configure hands its *files to the resources and
// data sources.
type magostest struct {
	version string
}

var _ provider.Provider = (*magostest)(nil)

// New returns the constructor providerserver.Serve needs for a provider
// reporting version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &magostest{version: version} }
}

// providerModel is the provider configuration block.
type providerModel struct {
	Root types.String `tfsdk:"root"`
}

// Metadata reports the type name and version.
func (p *magostest) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = typeName
	resp.Version = p.version
}

// Schema describes the provider configuration.
func (p *magostest) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages local files, for the Magos end-to-end tests.",
		Attributes: map[string]schema.Attribute{
			"root": schema.StringAttribute{
				Optional: true,
				Description: "Directory every path is resolved under; a path may not escape it. " +
					"Relative to OpenTofu's working directory when relative. Unset: paths are used as given.",
			},
		},
	}
}

// Configure resolves root and shares the resulting *files.
func (p *magostest) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.Root.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("root"), "Unknown provider root",
			"The root of the magostest provider must be known when planning; it cannot depend on a resource that is not created yet.")
		return
	}
	f, err := newFiles(cfg.Root.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("root"), "Invalid provider root", err.Error())
		return
	}
	resp.ResourceData = f
	resp.DataSourceData = f
}

// Resources lists the managed resource types.
func (p *magostest) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newFileResource}
}

// DataSources lists the data source types.
func (p *magostest) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newFileDataSource}
}
