// Receives seller-api webhooks with net/http. Standard library only.
// Run: SELLER_API_WEBHOOK_SECRET=whsec_... PORT=3000 go run main.go
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const Tolerance = 5 * time.Minute

type Envelope struct {
	Event           string          `json:"event"`
	OccurredAt      string          `json:"occurred_at"`
	DeliveryAttempt int             `json:"delivery_attempt"`
	Data            json.RawMessage `json:"data"`
}

// Verify checks a delivery against the accepted secrets and returns its envelope.
func Verify(header http.Header, rawBody []byte, secrets ...string) (*Envelope, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no secret")
	}
	for _, secret := range secrets {
		if secret == "" {
			return nil, errors.New("empty secret")
		}
	}
	eventID := header.Get("X-Webhook-Event-Id")
	timestamp := header.Get("X-Webhook-Timestamp")
	signature := header.Get("X-Webhook-Signature")
	if eventID == "" || timestamp == "" || signature == "" {
		return nil, errors.New("missing_header")
	}
	unix, err := strconv.ParseUint(timestamp, 10, 63)
	if err != nil {
		return nil, errors.New("invalid_timestamp")
	}
	if skew := time.Since(time.Unix(int64(unix), 0)); skew > Tolerance || skew < -Tolerance {
		return nil, errors.New("timestamp_out_of_tolerance")
	}

	received := []byte(strings.ToLower(strings.TrimSpace(signature)))
	valid := false
	for _, secret := range secrets { // the key is the whole secret string, whsec_ included
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(eventID + "." + timestamp + "."))
		mac.Write(rawBody)
		expected := []byte("sha256=" + hex.EncodeToString(mac.Sum(nil)))
		if hmac.Equal(expected, received) {
			valid = true
		}
	}
	if !valid {
		return nil, errors.New("invalid_signature")
	}

	var envelope Envelope
	if err := json.Unmarshal(rawBody, &envelope); err != nil || envelope.Event == "" || len(envelope.Data) == 0 {
		return nil, errors.New("invalid_body")
	}
	return &envelope, nil
}

// Handler verifies, skips event ids already queued, enqueues, and only then records the id and answers.
func Handler(secrets []string, enqueue func(eventID string, e *Envelope) error) http.HandlerFunc {
	var mu sync.Mutex
	handled := map[string]bool{} // stand-in for a table with a unique key on the event id
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		rawBody, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		envelope, err := Verify(r.Header, rawBody, secrets...)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		eventID := r.Header.Get("X-Webhook-Event-Id")
		mu.Lock()
		seen := handled[eventID]
		mu.Unlock()
		if seen { // a retry or a resend of an event already queued
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if err := enqueue(eventID, envelope); err != nil {
			log.Printf("enqueue failed: %v", err)
			http.Error(w, "try again", http.StatusServiceUnavailable) // not recorded: retried
			return
		}
		mu.Lock()
		handled[eventID] = true // only once the event is safely queued
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}
}

func main() {
	// Refuse to start without a secret: an empty key would accept signatures anyone can compute.
	secret := strings.TrimSpace(os.Getenv("SELLER_API_WEBHOOK_SECRET"))
	if secret == "" {
		log.Fatal("SELLER_API_WEBHOOK_SECRET is not set")
	}
	secrets := []string{secret}
	// While rotating, also accept the previous secret for a few minutes.
	if previous := strings.TrimSpace(os.Getenv("SELLER_API_WEBHOOK_PREVIOUS_SECRET")); previous != "" {
		secrets = append(secrets, previous)
	}

	// Stand-in for your durable job queue: a JSON-lines file.
	queueFile := os.Getenv("QUEUE_FILE")
	if queueFile == "" {
		queueFile = "webhook-queue.jsonl"
	}
	var queueMu sync.Mutex
	enqueue := func(eventID string, e *Envelope) error {
		line, err := json.Marshal(map[string]any{"event_id": eventID, "envelope": e})
		if err != nil {
			return err
		}
		queueMu.Lock()
		defer queueMu.Unlock()
		f, err := os.OpenFile(queueFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}

	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
	}
	http.Handle("/webhooks/seller-api", Handler(secrets, enqueue))
	listener, err := net.Listen("tcp", ":"+port)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on port %d", listener.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(listener, nil))
}
