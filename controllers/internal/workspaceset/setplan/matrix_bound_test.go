package setplan

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// listOf is a list generator of n elements with parameter key.
func listOf(key string, n int) magosv1.WorkspaceSetBaseGenerator {
	els := make([]map[string]string, n)
	for i := range els {
		els[i] = map[string]string{key: fmt.Sprint(i)}
	}
	return magosv1.WorkspaceSetBaseGenerator{List: &magosv1.ListGenerator{Elements: els}}
}

func matrixSet(maxElements *int32, a, b magosv1.WorkspaceSetBaseGenerator) *magosv1.WorkspaceSet {
	set := setOf(magosv1.WorkspaceSetGenerator{Matrix: &magosv1.MatrixGenerator{Generators: []magosv1.WorkspaceSetBaseGenerator{a, b}}})
	set.Spec.MaxElements = maxElements
	return set
}

// TestProductBound: the size of a matrix is counted before it is
// expanded, without overflowing, and compared with the bound.
func TestProductBound(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sizes  []int
		limit  int
		want   int
		within bool
	}{
		{"empty", nil, 10, 1, true},
		{"within", []int{10, 10}, 100, 100, true},
		{"one over", []int{10, 11}, 100, 110, false},
		{"a zero makes it empty", []int{0, 1 << 40}, 10, 0, true},
		{"1000 × 1000 over 1000", []int{1000, 1000}, 1000, 1_000_000, false},
		{"no overflow", []int{math.MaxInt, 2}, 1000, math.MaxInt, false},
		{"no overflow past the bound", []int{math.MaxInt / 2, math.MaxInt / 2, 3}, 10_000, math.MaxInt, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, within := productBound(tt.sizes, tt.limit)
			assert.Equal(t, tt.within, within)
			assert.Equal(t, tt.want, n)
		})
	}
}

// TestGenerateCountsAMatrixBeforeExpandingIt: a matrix whose product is
// over spec.maxElements is refused (TooManyElements) before any element
// is made; within the bound it is expanded as before.
func TestGenerateCountsAMatrixBeforeExpandingIt(t *testing.T) {
	src := fakeSources{}
	ctx := context.Background()

	_, err := Generate(ctx, src, matrixSet(nil, listOf("a", 40), listOf("b", 40)))
	var tm TooManyError
	require.ErrorAs(t, err, &tm, "40 × 40 = 1600 elements, over the default bound of 1000")
	assert.EqualError(t, err, "spec.generators[0]: the matrix yields 1600 elements (40 × 40), more than spec.maxElements (1000)")

	els, err := Generate(ctx, src, matrixSet(ptr(int32(1600)), listOf("a", 40), listOf("b", 40)))
	require.NoError(t, err)
	assert.Len(t, els, 1600)

	// 1,000 × 1,000: a million elements are never made.
	a, b := listOf("a", 1000), listOf("b", 1000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Generate(ctx, src, matrixSet(ptr(int32(10_000)), a, b))
	runtime.ReadMemStats(&after)
	require.ErrorAs(t, err, &tm)
	assert.Contains(t, err.Error(), "the matrix yields 1000000 elements (1000 × 1000), more than spec.maxElements (10000)")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "the matrix is not expanded (it would take hundreds of MiB)")
}

// TestGenerateStopsAtTheBound: generators that add up to more elements than
// the bound stop there, without deduplicating the rest.
func TestGenerateStopsAtTheBound(t *testing.T) {
	set := setOf(
		magosv1.WorkspaceSetGenerator{List: listOf("a", 6).List},
		magosv1.WorkspaceSetGenerator{List: listOf("b", 6).List},
	)
	set.Spec.MaxElements = ptr(int32(10))
	_, err := Generate(context.Background(), fakeSources{}, set)
	var tm TooManyError
	require.ErrorAs(t, err, &tm)
	assert.EqualError(t, err, "the generators yield more than spec.maxElements (10) elements")

	set.Spec.MaxElements = ptr(int32(12))
	els, err := Generate(context.Background(), fakeSources{}, set)
	require.NoError(t, err)
	assert.Len(t, els, 12)
}

// TestGenerateBoundsAMerge: a merge yields its first generator's elements:
// more than the bound are refused before merging, and the later
// generators' elements are found by key (a merge of two large directory
// lists costs their sizes, not their product).
func TestGenerateBoundsAMerge(t *testing.T) {
	dirs := make([]string, 20_000)
	for i := range dirs {
		dirs[i] = fmt.Sprintf("envs/e%05d", i)
	}
	src := fakeSources{dirs: dirs}
	d := magosv1.WorkspaceSetBaseGenerator{Directories: &magosv1.DirectoriesGenerator{Include: []string{"envs/*"}}}
	set := setOf(magosv1.WorkspaceSetGenerator{Merge: &magosv1.MergeGenerator{MergeKeys: []string{"path"}, Generators: []magosv1.WorkspaceSetBaseGenerator{d, d}}})
	_, err := Generate(context.Background(), src, set)
	var tm TooManyError
	require.ErrorAs(t, err, &tm)
	assert.EqualError(t, err, "spec.generators[0]: the merge yields 20000 elements, more than spec.maxElements (1000)")

	set.Spec.Generators[0].Merge.Generators[0] = list(map[string]string{"path": "envs/e00007", "size": "s"})
	els, err := Generate(context.Background(), src, set)
	require.NoError(t, err)
	assert.Equal(t, []Element{{"path": "envs/e00007", "path.basename": "e00007", "path.0": "envs", "path.1": "e00007", "size": "s"}}, els)
}
