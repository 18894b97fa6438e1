package configtree

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
)

// moduleBlocks is the part of a configuration file's schema read here.
var moduleBlocks = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "module", LabelNames: []string{"name"}}}}

// moduleSources returns the literal source of each module block of a
// configuration file (native or JSON syntax). A file that does not parse,
// or a source that is not a literal string, is an error: what it calls is
// unknown.
func moduleSources(name string, src []byte) ([]string, error) {
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(name, ".json") {
		f, diags = hcljson.Parse(src, name)
	} else {
		f, diags = hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	content, _, diags := f.Body.PartialContent(moduleBlocks)
	if diags.HasErrors() {
		return nil, diags
	}
	var sources []string
	for _, b := range content.Blocks {
		attrs, _, diags := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}}})
		if diags.HasErrors() {
			return nil, diags
		}
		a, ok := attrs.Attributes["source"]
		if !ok {
			continue
		}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, diags
		}
		if !v.Type().Equals(cty.String) || v.IsNull() || !v.IsKnown() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "module source is not a string"}}
		}
		sources = append(sources, v.AsString())
	}
	return sources, nil
}
