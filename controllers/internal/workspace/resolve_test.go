package workspace

import (
	"testing"

	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestAnnotationsAllowed(t *testing.T) {
	const role = "eks.amazonaws.com/role-arn"
	p := &magosv1.Project{}
	p.Name = "team-a"
	p.Status.AllowedServiceAccountAnnotations = []string{"example.com/any"}
	p.Status.AllowedServiceAccountAnnotationValues = []magosv1.AnnotationRule{
		{Key: role, Values: []string{"arn:aws:iam::111122223333:role/team-a-*", "arn:aws:iam::111122223333:role/shared-reader"}},
		{Key: "iam.gke.io/gcp-service-account", Values: []string{""}},
	}
	tests := []struct {
		name        string
		annotations map[string]string
		wantErr     string
	}{
		{name: "none"},
		{name: "a key allowed with any value", annotations: map[string]string{"example.com/any": "whatever"}},
		{name: "a value a glob matches", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/team-a-deployer"}},
		{name: "an exact value", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/shared-reader"}},
		{name: "another team's role", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/platform-admin"},
			wantErr: `annotation "eks.amazonaws.com/role-arn" has a value Project team-a does not allow`},
		{name: "a glob does not cross a slash", annotations: map[string]string{role: "arn:aws:iam::111122223333:role/team-a-x/admin"},
			wantErr: "does not allow"},
		{name: "an empty pattern matches only the empty value", annotations: map[string]string{"iam.gke.io/gcp-service-account": "admin@p.iam.gserviceaccount.com"},
			wantErr: "does not allow"},
		{name: "an unlisted key", annotations: map[string]string{"azure.workload.identity/client-id": "x"},
			wantErr: `annotation "azure.workload.identity/client-id" is not allowed by Project team-a`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := annotationsAllowed(tt.annotations, p)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
