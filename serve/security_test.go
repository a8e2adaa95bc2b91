package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"romae/model"
)

// With --auth-token-file every path but the probes and the API
// description needs the bearer token; a rotated token takes effect on
// reload.
func TestBearerToken(t *testing.T) {
	defer goleak.VerifyNone(t, leakOptions...)
	dir := t.TempDir()
	path := saveTiny(t, dir, model.TaskClassify, 1)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("correct-horse-battery-staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, path, Config{AuthTokenFile: tokenFile})
	do := func(method, p, token string) int {
		req, _ := http.NewRequest(method, ts.url+p, strings.NewReader(requestBody(synthSamples(1), nil, nil)))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("401 without WWW-Authenticate")
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, token string
		code                int
	}{
		{"POST", "/v1/predict", "", 401},
		{"POST", "/v1/predict", "wrong-token-of-some-length", 401},
		{"POST", "/v1/predict", "correct-horse-battery-staple", 200},
		{"GET", "/v1/model", "", 401},
		{"GET", "/metrics", "", 401},
		{"GET", "/metrics", "correct-horse-battery-staple", 200},
		{"POST", "/admin/reload", "", 401},
		{"GET", "/healthz", "", 200},
		{"GET", "/readyz", "", 200},
		{"GET", "/openapi.yaml", "", 200},
	} {
		if got := do(c.method, c.path, c.token); got != c.code {
			t.Errorf("%s %s with token %q: %d, want %d", c.method, c.path, c.token, got, c.code)
		}
	}
	if err := os.WriteFile(tokenFile, []byte("a-new-token-after-rotation"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ts.Reload(); err != nil {
		t.Fatal(err)
	}
	if old, rotated := do("POST", "/v1/predict", "correct-horse-battery-staple"), do("POST", "/v1/predict", "a-new-token-after-rotation"); old != 401 || rotated != 200 {
		t.Errorf("after rotation: old token %d, new token %d", old, rotated)
	}
	if err := os.WriteFile(tokenFile, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.Reload() // the model reloads; the bad token file is refused and the old token kept
	if got := do("POST", "/v1/predict", "a-new-token-after-rotation"); got != 200 {
		t.Errorf("after a bad token file: %d, want the previous token to work", got)
	}
	ts.stop()
}

// --tls-cert/--tls-key serve HTTPS (TLS ≥ 1.2).
func TestTLS(t *testing.T) {
	defer goleak.VerifyNone(t, leakOptions...)
	dir := t.TempDir()
	path := saveTiny(t, dir, model.TaskClassify, 1)
	certFile, keyFile, pool := selfSigned(t, dir)
	ts := startServer(t, path, Config{TLSCertFile: certFile, TLSKeyFile: keyFile})
	url := strings.Replace(ts.url, "http://", "https://", 1)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := client.Post(url+"/v1/predict", "application/json", strings.NewReader(requestBody(synthSamples(1), nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("HTTPS predict: %d, TLS %+v", resp.StatusCode, resp.TLS)
	}
	old := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}
	defer old.CloseIdleConnections()
	if _, err := (&http.Client{Transport: old}).Get(url + "/healthz"); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
	resp, err = ts.client.Get(ts.url + "/healthz") // plain HTTP to the TLS port
	if err == nil {
		readAll(t, resp)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP on the TLS port: %d", resp.StatusCode)
		}
	}
	ts.stop()
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "romae test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
