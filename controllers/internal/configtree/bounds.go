package configtree

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// HCL's parser recurses once per level of nesting (brackets, template
// interpolations and directives, quotes, heredocs) and once per prefix
// operator or conditional: a file of a few hundred kilobytes of "[" takes
// it past Go's stack limit, a fatal error no recover catches. Its lexer
// does not recurse, so each source is lexed first and parsed only within
// these bounds; no hand-written configuration comes near them.
const (
	// maxNesting is the deepest nesting parsed.
	maxNesting = 256
	// maxPrefixOperators is the most "!" and "-" in one source.
	maxPrefixOperators = 10_000
	// maxConditionals is the most "?" and template directives in one
	// source: each nested one costs a whole expression's recursion.
	maxConditionals = 1_000
	// maxChainTokens is the most tokens that extend an expression without
	// nesting it (traversal steps, index and splat brackets, binary
	// operators): the parser, and walks over what it builds, recurse once
	// per link of such a chain (a[*][*]…, 1+1+…).
	maxChainTokens = 20_000
)

// RefusedError means a configuration file is beyond what the controller
// parses: no engine-sized configuration nests that deep.
type RefusedError struct {
	File string
	Why  string
}

func (e *RefusedError) Error() string { return e.File + ": " + e.Why }

// checkBounds lexes src (a configuration file, or a template when
// template is true) and returns a RefusedError when parsing it could
// recurse past the bounds. A source that does not lex is left to the
// parser, which reports it.
func checkBounds(name string, src []byte, template bool) error {
	var tokens hclsyntax.Tokens
	if template {
		tokens, _ = hclsyntax.LexTemplate(src, name, hcl.InitialPos)
	} else {
		tokens, _ = hclsyntax.LexConfig(src, name, hcl.InitialPos)
	}
	depth, operators, conditionals, chains := 0, 0, 0, 0
	for _, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			if tok.Type == hclsyntax.TokenTemplateControl {
				conditionals++
			}
			if depth++; depth > maxNesting {
				return &RefusedError{File: name, Why: fmt.Sprintf("it nests deeper than %d levels", maxNesting)}
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			depth = max(0, depth-1)
		case hclsyntax.TokenBang, hclsyntax.TokenMinus:
			operators++
		case hclsyntax.TokenQuestion:
			conditionals++
		case hclsyntax.TokenDot, hclsyntax.TokenStar, hclsyntax.TokenEllipsis, hclsyntax.TokenPlus, hclsyntax.TokenSlash,
			hclsyntax.TokenPercent, hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual,
			hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq:
			chains++
		}
		if tok.Type == hclsyntax.TokenOBrack || tok.Type == hclsyntax.TokenMinus {
			chains++
		}
		if chains > maxChainTokens {
			return &RefusedError{File: name, Why: fmt.Sprintf("it has more than %d traversal steps, index brackets and binary operators", maxChainTokens)}
		}
		if operators > maxPrefixOperators {
			return &RefusedError{File: name, Why: fmt.Sprintf("it has more than %d prefix operators", maxPrefixOperators)}
		}
		if conditionals > maxConditionals {
			return &RefusedError{File: name, Why: fmt.Sprintf("it has more than %d conditionals and template directives", maxConditionals)}
		}
	}
	return nil
}
