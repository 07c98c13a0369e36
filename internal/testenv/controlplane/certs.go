package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity only has to outlive a test run or a demo session.
const certValidity = 7 * 24 * time.Hour

// pki is the throwaway certificate authority of one control plane. A single
// CA signs both the serving certificate and client certificates: nothing
// here needs the separation a production cluster has.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

// newPKI creates the CA, the kube-apiserver serving pair and the
// service-account signing pair under dir.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki dir: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "lease-exporter-test-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA: %w", err)
	}
	p := &pki{dir: dir, caCert: caCert, caKey: key, caPEM: certPEM(der)}
	if err := os.WriteFile(p.path("ca.crt"), p.caPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write CA: %w", err)
	}
	if err := p.writeServingCert(); err != nil {
		return nil, err
	}
	if err := p.writeServiceAccountKeys(); err != nil {
		return nil, err
	}
	if err := p.writeFrontProxyClientCert(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// writeServingCert covers loopback plus the in-cluster service names, so a
// kubeconfig pointing at either verifies.
func (p *pki) writeServingCert() error {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	}
	certData, keyData, err := p.issue(tmpl)
	if err != nil {
		return fmt.Errorf("issue serving cert: %w", err)
	}
	if err := os.WriteFile(p.path("apiserver.crt"), certData, 0o600); err != nil {
		return fmt.Errorf("write serving cert: %w", err)
	}
	if err := os.WriteFile(p.path("apiserver.key"), keyData, 0o600); err != nil {
		return fmt.Errorf("write serving key: %w", err)
	}
	return nil
}

// writeServiceAccountKeys writes the pair kube-apiserver signs
// service-account tokens with (and kube-controller-manager reuses).
func (p *pki) writeServiceAccountKeys() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	if err := os.WriteFile(p.path("sa.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return fmt.Errorf("write service-account key: %w", err)
	}
	if err := os.WriteFile(p.path("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600); err != nil {
		return fmt.Errorf("write service-account public key: %w", err)
	}
	return nil
}

// frontProxyUser is the only CN kube-apiserver accepts request headers from.
const frontProxyUser = "front-proxy-client"

// writeFrontProxyClientCert enables the request-header (front-proxy) setup.
// Without it the extension-apiserver-authentication ConfigMap lacks
// requestheader-client-ca-file and every component logs an error about it
// several times a second.
func (p *pki) writeFrontProxyClientCert() error {
	certData, keyData, err := p.clientCert(frontProxyUser, nil)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p.path("front-proxy-client.crt"), certData, 0o600); err != nil {
		return fmt.Errorf("write front-proxy cert: %w", err)
	}
	if err := os.WriteFile(p.path("front-proxy-client.key"), keyData, 0o600); err != nil {
		return fmt.Errorf("write front-proxy key: %w", err)
	}
	return nil
}

// clientCert issues a client certificate; kube-apiserver maps CN to the user
// name and O to the groups.
func (p *pki) clientCert(user string, groups []string) (certData, keyData []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	certData, keyData, err = p.issue(tmpl)
	if err != nil {
		return nil, nil, fmt.Errorf("issue client cert for %q: %w", user, err)
	}
	return certData, keyData, nil
}

// issue signs tmpl with the CA using a fresh key; both are returned as PEM.
func (p *pki) issue(tmpl *x509.Certificate) (certData, keyData []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	der, err := sign(tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal key: %w", err)
	}
	return certPEM(der), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// sign fills in serial and validity, then creates the certificate.
func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	tmpl.SerialNumber = serial
	// Backdated so a slightly skewed clock does not reject a fresh cert.
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(certValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
