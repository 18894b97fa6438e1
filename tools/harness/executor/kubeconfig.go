package executor

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Extra keys the apiserver adds to a ServiceAccount token's user info when
// the token is bound to a Pod.
const (
	podNameExtra  = "authentication.kubernetes.io/pod-name"
	podUIDExtra   = "authentication.kubernetes.io/pod-uid"
	nodeNameExtra = "authentication.kubernetes.io/node-name"
)

// serviceAccountName is the ServiceAccount a Pod runs as; without the
// ServiceAccount admission plugin nothing defaults it.
func serviceAccountName(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}

// ServiceAccountIdentity is the user a token of ServiceAccount
// namespace/name authenticates as.
func ServiceAccountIdentity(namespace, name string) rest.ImpersonationConfig {
	return rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// podIdentity is the user a Pod's ServiceAccount token authenticates as.
func podIdentity(pod *corev1.Pod, saUID types.UID) rest.ImpersonationConfig {
	id := ServiceAccountIdentity(pod.Namespace, serviceAccountName(pod))
	id.UID = string(saUID)
	id.Extra = map[string][]string{
		podNameExtra:  {pod.Name},
		podUIDExtra:   {string(pod.UID)},
		nodeNameExtra: {pod.Spec.NodeName},
	}
	return id
}

// WriteKubeconfig writes a kubeconfig that reaches the apiserver with the
// admin credentials but impersonates identity, so every request
// is authorized as that identity. Its context's namespace is namespace, as
// the in-cluster namespace file would say.
func WriteKubeconfig(path string, admin *rest.Config, identity rest.ImpersonationConfig, namespace string) error {
	caData, err := fileOrData(admin.CAData, admin.CAFile)
	if err != nil {
		return err
	}
	certData, err := fileOrData(admin.CertData, admin.CertFile)
	if err != nil {
		return err
	}
	keyData, err := fileOrData(admin.KeyData, admin.KeyFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{
		Server:                   admin.Host + admin.APIPath,
		CertificateAuthorityData: caData,
		InsecureSkipTLSVerify:    admin.Insecure,
		TLSServerName:            admin.ServerName,
	}
	cfg.AuthInfos[identity.UserName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: certData,
		ClientKeyData:         keyData,
		Token:                 admin.BearerToken,
		TokenFile:             admin.BearerTokenFile,
		Username:              admin.Username,
		Password:              admin.Password,
		Impersonate:           identity.UserName,
		ImpersonateUID:        identity.UID,
		ImpersonateGroups:     identity.Groups,
		ImpersonateUserExtra:  identity.Extra,
	}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: identity.UserName, Namespace: namespace}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

func fileOrData(data []byte, file string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	return os.ReadFile(file)
}
