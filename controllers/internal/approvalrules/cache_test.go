package approvalrules

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/plansummary"
)

func resources(n int) []plansummary.ResourceChange {
	out := make([]plansummary.ResourceChange, n)
	for i := range out {
		out[i].Address = fmt.Sprintf("terraform_data.r%d", i)
		out[i].Change.Actions = []string{"create"}
	}
	return out
}

// TestResourceCacheReadsABundleOnce: the resources of a stored plan are
// read once per bundle digest; a failed read is not remembered; a plan
// without a bundle digest is read every time.
func TestResourceCacheReadsABundleOnce(t *testing.T) {
	c := NewResourceCache(4, 100)
	loads := 0
	load := func() ([]plansummary.ResourceChange, error) { loads++; return resources(3), nil }
	for range 3 {
		got, err := c.Resources("sha256:a", load)
		require.NoError(t, err)
		assert.Len(t, got, 3)
	}
	assert.Equal(t, 1, loads, "one read for the same bundle")

	_, err := c.Resources("sha256:b", func() ([]plansummary.ResourceChange, error) { return nil, errors.New("unreadable") })
	require.Error(t, err)
	_, err = c.Resources("sha256:b", load)
	require.NoError(t, err)
	assert.Equal(t, 2, loads, "a failed read is tried again")

	for range 2 {
		_, err = c.Resources("", load)
		require.NoError(t, err)
	}
	assert.Equal(t, 4, loads, "no digest, no cache")

	var nilCache *ResourceCache
	_, err = nilCache.Resources("sha256:a", load)
	require.NoError(t, err)
	assert.Equal(t, 5, loads, "a nil cache reads")
}

// TestResourceCacheIsBounded: the cache keeps at most its number of plans
// and of resources, evicting the least recently used; a plan with more
// resources than the whole cache holds is not kept.
func TestResourceCacheIsBounded(t *testing.T) {
	c := NewResourceCache(3, 100)
	loads := map[string]int{}
	get := func(digest string, n int) {
		t.Helper()
		_, err := c.Resources(digest, func() ([]plansummary.ResourceChange, error) { loads[digest]++; return resources(n), nil })
		require.NoError(t, err)
	}
	for i := range 10 {
		get(fmt.Sprint(i), 1)
		plans, weight := c.Len()
		assert.LessOrEqual(t, plans, 3)
		assert.LessOrEqual(t, weight, 100)
	}
	get("9", 1)
	get("8", 1)
	get("7", 1)
	get("0", 1)
	assert.Equal(t, map[string]int{"0": 2, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 1, "8": 1, "9": 1}, loads,
		"the three most recent were kept, the first was evicted")
	get("8", 1)
	assert.Equal(t, 1, loads["8"], "8 was used more recently than 7")

	get("big", 60)
	get("bigger", 60)
	plans, weight := c.Len()
	assert.LessOrEqual(t, weight, 100, "resources bound the cache too")
	assert.LessOrEqual(t, plans, 3)
	get("huge", 101)
	get("huge", 101)
	assert.Equal(t, 2, loads["huge"], "a plan larger than the cache is not kept")
	_, weight = c.Len()
	assert.LessOrEqual(t, weight, 100)
}

// TestCompiledRulesAreBounded: compiled expressions are shared and kept,
// but no more than maxPrograms of them: every Workspace's new rules do not
// grow the controller's memory for ever.
func TestCompiledRulesAreBounded(t *testing.T) {
	for i := range maxPrograms + 50 {
		_, err := Compile([]magosv1.ApprovalRule{{Name: "n", When: fmt.Sprintf("plan.add > %d", i)}}, "spec.approvalRules")
		require.NoError(t, err)
	}
	n, _ := programs.Len()
	assert.LessOrEqual(t, n, maxPrograms)
	rules, err := Compile([]magosv1.ApprovalRule{{Name: "first", When: "plan.add > 0"}}, "spec.approvalRules")
	require.NoError(t, err, "an evicted expression compiles again")
	got, err := rules.Govern(Plan{Add: 1})
	require.NoError(t, err)
	assert.Equal(t, "first", got.Name)
}
