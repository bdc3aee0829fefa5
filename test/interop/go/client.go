// An OAuth 2.0 / OpenID Connect client written the way a Go application uses Debian's libraries:
// golang.org/x/oauth2 (authorization URL, code exchange, refresh, client credentials), github.com/coreos/go-oidc
// (discovery and RS256 ID token verification) and gopkg.in/square/go-jose.v2 (the private_key_jwt assertion;
// x/oauth2 has no client-assertion helper of its own, its jws package is internal).
//
// The driver (test/interop-clients.test.ts) passes the settings in INTEROP_* variables, signs the user in when
// the program prints "AUTHORIZE <url>" and answers with the callback URL on stdin. Each step prints
// "RESULT <step> <json>", the driver checks the tokens; any failure exits non-zero with the library's error.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/ioutil"
	"net/url"
	"os"
	"strings"
	"time"

	oidc "github.com/coreos/go-oidc"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	jose "gopkg.in/square/go-jose.v2"
	"gopkg.in/square/go-jose.v2/jwt"
)

func env(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fail("setup", fmt.Errorf("%s is not set", name))
	}
	return value
}

func fail(step string, err error) {
	fmt.Fprintf(os.Stderr, "FAIL %s: %v\n", step, err)
	os.Exit(1)
}

func random() string {
	buffer := make([]byte, 16)
	if _, err := rand.Read(buffer); err != nil {
		fail("random", err)
	}
	return hex.EncodeToString(buffer)
}

func result(step string, token *oauth2.Token, extra map[string]interface{}) {
	out := map[string]interface{}{
		"access_token":  token.AccessToken,
		"token_type":    token.TokenType,
		"refresh_token": token.RefreshToken,
		// x/oauth2 turns expires_in (number or string) into an expiry time.
		"expires_in": int(time.Until(token.Expiry).Round(time.Second).Seconds()),
	}
	for key, value := range extra {
		out[key] = value
	}
	line, _ := json.Marshal(out)
	fmt.Printf("RESULT %s %s\n", step, line)
}

// assertion signs a private_key_jwt client assertion (RFC 7523) for the endpoint it is sent to.
func assertion(key *rsa.PrivateKey, keyID, clientID, audience string) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", keyID))
	if err != nil {
		fail("assertion", err)
	}
	now := time.Now()
	signed, err := jwt.Signed(signer).Claims(jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{audience},
		ID:       random(),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(5 * time.Minute)),
	}).CompactSerialize()
	if err != nil {
		fail("assertion", err)
	}
	return signed
}

func privateKeyJWT(ctx context.Context, step string, key *rsa.PrivateKey, keyID, clientID, tokenURL string) {
	config := clientcredentials.Config{
		ClientID: clientID,
		TokenURL: tokenURL,
		EndpointParams: url.Values{
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {assertion(key, keyID, clientID, tokenURL)},
		},
		AuthStyle: oauth2.AuthStyleInParams,
	}
	token, err := config.Token(ctx)
	if err != nil {
		fail(step, err)
	}
	result(step, token, nil)
}

func main() {
	ctx := context.Background()
	issuer := env("INTEROP_ISSUER")
	v2URL := env("INTEROP_V2_TOKEN_URL")
	clientID := env("INTEROP_CLIENT_ID")
	clientSecret := env("INTEROP_CLIENT_SECRET")

	provider, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		fail("discovery", err)
	}
	config := oauth2.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Endpoint:     provider.Endpoint(),
		RedirectURL:  env("INTEROP_REDIRECT_URI"),
		Scopes:       []string{oidc.ScopeOpenID},
	}

	// Authorization code flow.
	state, nonce := random(), random()
	fmt.Printf("AUTHORIZE %s\n", config.AuthCodeURL(state, oidc.Nonce(nonce)))
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		fail("callback", err)
	}
	callback, err := url.Parse(strings.TrimSpace(line))
	if err != nil {
		fail("callback", err)
	}
	if callback.Query().Get("state") != state {
		fail("callback", fmt.Errorf("state mismatch"))
	}
	token, err := config.Exchange(ctx, callback.Query().Get("code"))
	if err != nil {
		fail("code", err)
	}
	rawIDToken, ok := token.Extra("id_token").(string)
	if !ok {
		fail("code", fmt.Errorf("no id_token in the token response"))
	}
	idToken, err := provider.Verifier(&oidc.Config{ClientID: clientID}).Verify(ctx, rawIDToken)
	if err != nil {
		fail("id_token", err)
	}
	if idToken.Nonce != nonce {
		fail("id_token", fmt.Errorf("nonce mismatch"))
	}
	result("code", token, map[string]interface{}{"id_token_sub": idToken.Subject, "id_token_alg": "RS256"})

	// Refresh: an expired token makes the token source refresh.
	refreshed, err := config.TokenSource(ctx, &oauth2.Token{RefreshToken: token.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	if err != nil {
		fail("refresh", err)
	}
	result("refresh", refreshed, nil)

	// Client credentials with the secret, at the account token endpoint and the v2 consumer endpoint.
	for step, tokenURL := range map[string]string{"client_credentials": provider.Endpoint().TokenURL, "client_credentials_v2": v2URL} {
		credentials := clientcredentials.Config{ClientID: clientID, ClientSecret: clientSecret, TokenURL: tokenURL}
		token, err := credentials.Token(ctx)
		if err != nil {
			fail(step, err)
		}
		result(step, token, nil)
	}

	// private_key_jwt at both endpoints.
	pemBytes, err := ioutil.ReadFile(env("INTEROP_KEY_FILE"))
	if err != nil {
		fail("key", err)
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		fail("key", fmt.Errorf("no PEM block"))
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		fail("key", err)
	}
	key, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		fail("key", fmt.Errorf("not an RSA key"))
	}
	keyedID, keyID := env("INTEROP_KEYED_CLIENT_ID"), env("INTEROP_KEY_ID")
	privateKeyJWT(ctx, "private_key_jwt", key, keyID, keyedID, provider.Endpoint().TokenURL)
	privateKeyJWT(ctx, "private_key_jwt_v2", key, keyID, keyedID, v2URL)
	fmt.Println("DONE")
}
