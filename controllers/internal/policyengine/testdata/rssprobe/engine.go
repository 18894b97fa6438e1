//go:build policyengine

package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policyengine"
)

func init() { evaluate = evaluateWithEngine }

// evaluateWithEngine creates the Evaluator, loads the policies and
// evaluates the plan once, as the workspace-controller does.
func evaluateWithEngine(plan []byte, policyFiles []string) (string, error) {
	e, err := policyengine.NewEvaluator()
	if err != nil {
		return "", err
	}
	var policies []policy.Policy
	for _, file := range policyFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		p, err := policy.FromUnstructured(u)
		if err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		policies = append(policies, p)
	}
	v := e.Evaluate(context.Background(), policies, plan)
	if v.Errored {
		return "", fmt.Errorf("evaluation errored: %s", v.Message)
	}
	return policyprotocol.StatusMessage(v, 120), nil
}
