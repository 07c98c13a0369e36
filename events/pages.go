package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// An Event's size is bounded only by what the API server stores (etcd's default
// --max-request-bytes, 1.5 MiB), so a page is never decoded whole: its JSON is read one Event
// at a time, and an Event whose JSON exceeds maxEventJSON (no Event the exporter writes comes
// near it: a 1 KiB note and its metadata are a few KiB) is skipped without being decoded. The
// rebuild's memory is then one Event's JSON, whatever the page holds, and pages can be as
// large as the API server's default chunk: 500 Events a request.
const (
	listPage     = 500
	maxEventJSON = 64 << 10
)

// pageFunc lists one page of Events in ns (all namespaces when empty), hands each Event
// under maxEventJSON to each and counts the others in oversized, and returns the page's
// continue token.
type pageFunc func(ctx context.Context, ns string, opts metav1.ListOptions, each func(*eventsv1.Event), oversized *int) (string, error)

// pagesOf reads pages through client's REST client, streaming; a client without one (the
// fake clientsets of unit tests) is listed a page at a time with List.
func pagesOf(client kubernetes.Interface) pageFunc {
	rc, ok := client.EventsV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return func(ctx context.Context, ns string, opts metav1.ListOptions, each func(*eventsv1.Event), _ *int) (string, error) {
			list, err := client.EventsV1().Events(ns).List(ctx, opts)
			if err != nil {
				return "", err
			}
			for i := range list.Items {
				each(&list.Items[i])
			}
			return list.Continue, nil
		}
	}
	return func(ctx context.Context, ns string, opts metav1.ListOptions, each func(*eventsv1.Event), oversized *int) (string, error) {
		// JSON whatever the client negotiates otherwise (protobuf cannot be read an item at a
		// time with the standard library).
		body, err := rc.Get().Namespace(ns).Resource("events").
			VersionedParams(&opts, scheme.ParameterCodec).
			SetHeader("Accept", "application/json").
			Stream(ctx)
		if err != nil {
			return "", err // a *StatusError: a 403 still reads as forbidden
		}
		defer body.Close()
		return decodePage(body, each, oversized)
	}
}

// decodePage reads an EventList's JSON one item at a time.
func decodePage(r io.Reader, each func(*eventsv1.Event), oversized *int) (string, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	var cont string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "metadata":
			var m metav1.ListMeta
			if err := dec.Decode(&m); err != nil {
				return "", fmt.Errorf("an Event list's metadata: %w", err)
			}
			cont = m.Continue
		case "items":
			if err := expectDelim(dec, '['); err != nil {
				return "", err
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return "", fmt.Errorf("an Event in a list: %w", err)
				}
				if len(raw) > maxEventJSON {
					*oversized++
					continue
				}
				var ev eventsv1.Event
				if err := json.Unmarshal(raw, &ev); err != nil {
					return "", fmt.Errorf("an Event in a list: %w", err)
				}
				each(&ev)
			}
			if err := expectDelim(dec, ']'); err != nil {
				return "", err
			}
		default: // kind, apiVersion
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	return cont, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("an Event list: %w", err)
	}
	if tok != want {
		return fmt.Errorf("an Event list: got %v where %v belongs", tok, want)
	}
	return nil
}
