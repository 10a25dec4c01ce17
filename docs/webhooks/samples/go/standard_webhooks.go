// Checks the Standard Webhooks signature of a delivery (webhook-id, webhook-timestamp, webhook-signature).
// Standard library only; it sits beside main.go, in the same package.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// VerifyStandard reports whether webhook-signature matches one of the secrets (whsec_ + base64).
func VerifyStandard(header http.Header, rawBody []byte, secrets ...string) bool {
	id, ts := header.Get("webhook-id"), header.Get("webhook-timestamp")
	unix, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil || math.Abs(time.Since(time.Unix(unix, 0)).Seconds()) > 300 {
		return false
	}
	valid := false
	for _, secret := range secrets {
		text := strings.TrimRight(strings.TrimPrefix(secret, "whsec_"), "=")
		key, err := base64.RawURLEncoding.DecodeString(strings.NewReplacer("+", "-", "/", "_").Replace(text))
		if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) == 0 {
			continue // both alphabets decode here: new secrets are base64, older ones base64url
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "."))
		mac.Write(rawBody)
		expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		for _, versioned := range strings.Split(header.Get("webhook-signature"), " ") {
			version, signature, _ := strings.Cut(versioned, ",")
			if version == "v1" && hmac.Equal([]byte(signature), expected) {
				valid = true
			}
		}
	}
	return valid
}
