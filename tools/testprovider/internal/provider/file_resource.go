package provider

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// fileResource is magostest_file: one local file whose bytes are content
// followed by sensitive_content.
type fileResource struct {
	files *files
}

var (
	_ resource.ResourceWithConfigure   = (*fileResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*fileResource)(nil)
	_ resource.ResourceWithImportState = (*fileResource)(nil)
)

func newFileResource() resource.Resource { return &fileResource{} }

// fileModel is the state of a magostest_file.
type fileModel struct {
	ID               types.String `tfsdk:"id"`
	Path             types.String `tfsdk:"path"`
	Content          types.String `tfsdk:"content"`
	SensitiveContent types.String `tfsdk:"sensitive_content"`
	SHA256           types.String `tfsdk:"sha256"`
}

// bytes is what the file holds for m: content, then sensitive_content.
func (m *fileModel) bytes() []byte {
	return []byte(m.Content.ValueString() + m.SensitiveContent.ValueString())
}

// Metadata names the resource magostest_file.
func (r *fileResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_file"
}

// Schema describes magostest_file.
func (r *fileResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A local file. Refresh reads it back, so an edit outside Terraform is drift.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:    true,
				Description: "The path, as configured.",
			},
			"path": schema.StringAttribute{
				Required:      true,
				Description:   "Path of the file; under the provider root when it is set. Changing it replaces the file.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"content": schema.StringAttribute{
				Required:    true,
				Description: "Content of the file.",
			},
			"sensitive_content": schema.StringAttribute{
				Optional:    true,
				Sensitive:   true,
				Description: "Written after content when set; hidden from plan output.",
			},
			"sha256": schema.StringAttribute{
				Computed:    true,
				Description: "Hex SHA-256 of the whole file.",
			},
		},
	}
}

// Configure receives the provider's *files.
func (r *fileResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.files = providerFiles(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan rejects a path outside the provider root at plan time and,
// when the configuration is known, plans id and sha256 exactly.
func (r *fileResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.files == nil {
		return // destroy, or the provider is not configured yet
	}
	var plan fileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Path.IsUnknown() {
		return
	}
	if err := r.files.Check(plan.Path.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "Invalid magostest_file path", err.Error())
		return
	}
	plan.ID = plan.Path
	if !plan.Content.IsUnknown() && !plan.SensitiveContent.IsUnknown() {
		plan.SHA256 = types.StringValue(checksum(plan.bytes()))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// Create writes the file.
func (r *fileResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan fileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.write(&plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Read reads the file back into content (so an outside edit is drift) and
// removes the resource from state when the file is gone.
func (r *fileResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state fileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data, err := r.files.ReadFile(state.Path.ValueString())
	if errors.Is(err, fs.ErrNotExist) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "Cannot read magostest_file", err.Error())
		return
	}
	splitContent(&state, string(data))
	state.ID = state.Path
	state.SHA256 = types.StringValue(checksum(data))
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// splitContent sets content and sensitive_content of m from the file's
// text. The known sensitive suffix is split off when the file still ends
// with it; otherwise the whole text is content and sensitive_content is
// cleared, which the next plan reports as drift on both.
func splitContent(m *fileModel, text string) {
	secret := m.SensitiveContent.ValueString()
	if !m.SensitiveContent.IsNull() && strings.HasSuffix(text, secret) {
		m.Content = types.StringValue(strings.TrimSuffix(text, secret))
		return
	}
	m.Content = types.StringValue(text)
	m.SensitiveContent = types.StringNull()
}

// Update rewrites the file.
func (r *fileResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan fileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.write(&plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete removes the file; one already gone is fine.
func (r *fileResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state fileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.files.Remove(state.Path.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "Cannot delete magostest_file", err.Error())
	}
}

// ImportState imports a file by its path; Read then fills in the rest.
func (r *fileResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("path"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// write writes m's file and sets its id and sha256.
func (r *fileResource) write(m *fileModel) diag.Diagnostics {
	var diags diag.Diagnostics
	data := m.bytes()
	if err := r.files.WriteFile(m.Path.ValueString(), data); err != nil {
		diags.AddAttributeError(path.Root("path"), "Cannot write magostest_file", err.Error())
		return diags
	}
	m.ID = m.Path
	m.SHA256 = types.StringValue(checksum(data))
	return diags
}

// providerFiles returns the *files a provider's Configure shared, or nil
// before the provider is configured.
func providerFiles(data any, diags *diag.Diagnostics) *files {
	if data == nil {
		return nil
	}
	f, ok := data.(*files)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *files, got %T", data))
		return nil
	}
	return f
}
