package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// fileDataSource is the magostest_file data source: it reads a file.
type fileDataSource struct {
	files *files
}

var _ datasource.DataSourceWithConfigure = (*fileDataSource)(nil)

func newFileDataSource() datasource.DataSource { return &fileDataSource{} }

// fileDataModel is the result of reading a magostest_file data source.
type fileDataModel struct {
	ID      types.String `tfsdk:"id"`
	Path    types.String `tfsdk:"path"`
	Content types.String `tfsdk:"content"`
	SHA256  types.String `tfsdk:"sha256"`
}

// Metadata names the data source magostest_file.
func (d *fileDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_file"
}

// Schema describes the magostest_file data source.
func (d *fileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Reads a local file.",
		Attributes: map[string]schema.Attribute{
			"id":      schema.StringAttribute{Computed: true, Description: "The path, as configured."},
			"path":    schema.StringAttribute{Required: true, Description: "Path of the file; under the provider root when it is set."},
			"content": schema.StringAttribute{Computed: true, Description: "Content of the file."},
			"sha256":  schema.StringAttribute{Computed: true, Description: "Hex SHA-256 of the file."},
		},
	}
}

// Configure receives the provider's *files.
func (d *fileDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.files = providerFiles(req.ProviderData, &resp.Diagnostics)
}

// Read reads the file; a missing one is an error.
func (d *fileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m fileDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data, err := d.files.ReadFile(m.Path.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "Cannot read file", err.Error())
		return
	}
	m.ID = m.Path
	m.Content = types.StringValue(string(data))
	m.SHA256 = types.StringValue(checksum(data))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
