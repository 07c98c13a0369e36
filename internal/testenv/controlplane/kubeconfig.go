package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AdminUser is the identity of Config() and KubeconfigPath(): a member of
// system:masters, so RBAC never gets in its way.
const AdminUser = "lease-exporter-admin"

// credentials is what a kubeconfig authenticates with: either a client
// certificate pair or a bearer token.
type credentials struct {
	certData, keyData []byte
	token             string
}

// restConfig builds a client config for the current API server address.
func (cp *ControlPlane) restConfig(c credentials) *rest.Config {
	return &rest.Config{
		Host:        cp.Host(),
		BearerToken: c.token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.pki.caPEM,
			CertData: c.certData,
			KeyData:  c.keyData,
		},
	}
}

// writeKubeconfig writes a self-contained kubeconfig (all data embedded) so
// it can be handed to another process or copied out of Dir().
func (cp *ControlPlane) writeKubeconfig(path, user string, c credentials) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["controlplane"] = &clientcmdapi.Cluster{
		Server:                   cp.Host(),
		CertificateAuthorityData: cp.pki.caPEM,
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.certData,
		ClientKeyData:         c.keyData,
		Token:                 c.token,
	}
	cfg.Contexts["controlplane"] = &clientcmdapi.Context{Cluster: "controlplane", AuthInfo: user}
	cfg.CurrentContext = "controlplane"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// KubeconfigForUser writes a kubeconfig that authenticates as user with the
// given groups via a client certificate. Such a user has no rights beyond
// what RBAC grants it (plus system:authenticated), which is what RBAC tests
// need.
func (cp *ControlPlane) KubeconfigForUser(user string, groups ...string) (string, error) {
	certData, keyData, err := cp.pki.clientCert(user, groups)
	if err != nil {
		return "", err
	}
	path, err := cp.kubeconfigPath("user-" + user)
	if err != nil {
		return "", err
	}
	if err := cp.writeKubeconfig(path, user, credentials{certData: certData, keyData: keyData}); err != nil {
		return "", err
	}
	return path, nil
}

// KubeconfigForToken writes a kubeconfig that authenticates with a bearer
// token, e.g. one from the TokenRequest API for a ServiceAccount.
func (cp *ControlPlane) KubeconfigForToken(token string) (string, error) {
	if token == "" {
		return "", fmt.Errorf("empty token")
	}
	path, err := cp.kubeconfigPath("token")
	if err != nil {
		return "", err
	}
	if err := cp.writeKubeconfig(path, "token-user", credentials{token: token}); err != nil {
		return "", err
	}
	return path, nil
}

// ConfigForUser is KubeconfigForUser for in-process clients.
func (cp *ControlPlane) ConfigForUser(user string, groups ...string) (*rest.Config, error) {
	certData, keyData, err := cp.pki.clientCert(user, groups)
	if err != nil {
		return nil, err
	}
	return cp.restConfig(credentials{certData: certData, keyData: keyData}), nil
}

// kubeconfigPath returns a fresh, never reused file name under
// Dir()/kubeconfigs: callers may hold on to several at once.
func (cp *ControlPlane) kubeconfigPath(label string) (string, error) {
	dir := filepath.Join(cp.dir, "kubeconfigs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create kubeconfig dir: %w", err)
	}
	clean := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(label, "_")
	f, err := os.CreateTemp(dir, clean+"-*.kubeconfig")
	if err != nil {
		return "", fmt.Errorf("create kubeconfig file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("close kubeconfig file: %w", err)
	}
	return f.Name(), nil
}
